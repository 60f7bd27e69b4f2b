#pragma once

#include <string>
#include <utility>
#include <vector>

#include "kernels/cuda/kernel_timeline.hpp"

namespace weft::cuda {

// Span times from CUDA events recorded on the compute stream at push() and pop(), for when
// CUPTI cannot be used. The first push after a collection also records an origin event and reads
// the host's steady clock: with the stream idle (the caller synchronized), the origin runs at
// once, so a span's host time is that reading plus its events' distance from the origin. Work on
// other streams (asynchronous communication) is not timed.
class EventTimeline final : public KernelTimeline {
 public:
  EventTimeline(cudaStream_t compute, std::string why);
  ~EventTimeline() override;
  EventTimeline(const EventTimeline&) = delete;
  EventTimeline& operator=(const EventTimeline&) = delete;

  void push(std::uint32_t id) override;
  void pop() override;
  std::vector<TimedSpan> collect() override;
  std::string description() const override { return "cuda events on the compute stream (" + why_ + ")"; }
  bool times_every_stream() const override { return false; }
  bool times_kernels() const override { return false; }

 private:
  cudaEvent_t event();

  struct OpenSpan {
    std::uint32_t id;
    cudaEvent_t start;
    cudaEvent_t end;
  };
  cudaStream_t compute_;
  std::string why_;
  std::vector<cudaEvent_t> events_;  // every event made, reused after each collection
  std::size_t used_ = 0;
  cudaEvent_t origin_ = nullptr;
  std::int64_t origin_host_ns_ = 0;
  std::vector<OpenSpan> spans_;
};

}  // namespace weft::cuda
