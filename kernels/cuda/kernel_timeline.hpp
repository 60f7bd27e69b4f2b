#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "kernels/backend.hpp"

namespace weft::cuda {

// Where the CUDA backend's span times come from. Work issued between push(id) and pop() belongs
// to span `id`; after the device is synchronized, collect() returns each span's start and end on
// one clock (CUPTI's, or the host's plus the events' distances), whose zero means nothing.
class KernelTimeline {
 public:
  virtual ~KernelTimeline() = default;
  virtual void push(std::uint32_t id) = 0;
  virtual void pop() = 0;
  virtual std::vector<TimedSpan> collect() = 0;
  // How spans are timed, for the user: measurement files and live reports carry it.
  virtual std::string description() const = 0;
  // Whether work issued on streams other than the compute stream gets a span.
  virtual bool times_every_stream() const = 0;
  // Whether a span's start and end are its kernels' own (CUPTI's records), not markers queued
  // around them (BackendDevice::times_kernels).
  virtual bool times_kernels() const = 0;
  // Records received but not attributed to a span (Backend::unattributed_timing).
  virtual std::string unattributed() const { return {}; }
};

// CUPTI's activity records when this process can subscribe to CUPTI; CUDA events on `compute`
// when it cannot (a profiler such as Nsight Compute holds the subscription), saying why.
std::unique_ptr<KernelTimeline> make_kernel_timeline(cudaStream_t compute);

}  // namespace weft::cuda
