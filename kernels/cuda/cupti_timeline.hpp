#pragma once

#include <stdexcept>

#include "kernels/cuda/kernel_timeline.hpp"
#include "kernels/kernel_record_matcher.hpp"

namespace weft::cuda {

// CUPTI refused this process its subscription (another tool holds it), or is missing.
struct CuptiUnavailable : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Kernel times from CUPTI's activity API. Work issued between push(id) and pop() carries the
// external correlation id `id`; CUPTI reports, per API call that launched work, the external id
// it was made under, and per kernel (or memset) when it ran. collect() flushes CUPTI's buffers
// and joins the two (KernelRecordMatcher). One per process: CUPTI's activity buffers are
// process-wide.
class CuptiTimeline final : public KernelTimeline {
 public:
  CuptiTimeline();
  ~CuptiTimeline() override;
  CuptiTimeline(const CuptiTimeline&) = delete;
  CuptiTimeline& operator=(const CuptiTimeline&) = delete;

  void push(std::uint32_t id) override;
  void pop() override;
  std::vector<TimedSpan> collect() override;
  std::string description() const override { return "cupti"; }
  bool times_every_stream() const override { return true; }
  bool times_kernels() const override { return true; }
  std::string unattributed() const override;
};

}  // namespace weft::cuda
