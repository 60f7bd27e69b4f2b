#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "kernels/communicator.hpp"
#include "kernels/kernel_shapes.hpp"
#include "simulator/core/kernel.hpp"

namespace weft {

// Memory on a backend's device, freed when the last copy goes.
class Buffer {
 public:
  Buffer() = default;
  Buffer(std::shared_ptr<std::byte> memory, std::int64_t bytes) : memory_(std::move(memory)), bytes_(bytes) {}

  std::byte* data() const { return memory_.get(); }
  std::int64_t bytes() const { return bytes_; }

 private:
  std::shared_ptr<std::byte> memory_;
  std::int64_t bytes_ = 0;
};

// What a backend runs on, for measurement files and the calibration profile's device check.
struct BackendDevice {
  std::string backend;                                         // "cpu" or "cuda"
  std::string name;                                            // e.g. "AMD EPYC, 1 thread" or "NVIDIA H100 80GB HBM3"
  std::vector<std::pair<std::string, std::string>> libraries;  // (library, version)
  std::vector<Dtype> dtypes;                                   // dtypes its kernels compute in
  std::int64_t memory_bytes = 0;                               // memory one rank may use
  std::string timing;                                          // where span times come from
  bool times_async_work = true;                                // whether work issued off the compute stream gets a span
  // Whether a span runs from its first kernel's own start to its last kernel's own end (CUPTI),
  // rather than between markers queued around them (CUDA events) or the host's calls (the CPU).
  bool times_kernels = false;
  // Whether a call returns once its kernel is queued (a GPU) rather than run (the CPU): only then
  // does the host's time to issue an op differ from the op's (weft bench measures it).
  bool issues_asynchronously = false;
};

// One op's span on the backend's clock (nanoseconds: the host's monotonic clock on the CPU, CUPTI's
// or CUDA events' on a GPU; only differences between spans mean anything): from its first
// kernel's start to its last kernel's end, and how long within that a kernel of it ran (less
// than end - start when the host issued its kernels slower than the device ran them).
struct TimedSpan {
  std::uint32_t id = 0;
  std::int64_t start_ns = 0;
  std::int64_t end_ns = 0;
  std::int64_t busy_ns = 0;
};

// A device that runs kernels and times them: the CPU (Eigen, monotonic clock) or a CUDA GPU
// (cuBLASLt, weft's attention kernel, CUPTI). Kernels are issued in program order on one compute
// stream; on the CPU they run before the call returns, on a GPU when the stream reaches them.
//
// Timing: open_span(id) before issuing an op's work, issued_span(id) right after, close_span(id)
// once the host knows the work is complete (right after issuing, for work on the CPU). After
// synchronize(), take_spans() returns each span's start and end: the CPU reads its clock at open
// and close; a GPU attributes the kernels issued between open and issued to the span (CUPTI) and
// reports when they ran. Opening a span again before it is closed adds the work issued until the
// next issued_span to it (a relay's second phase).
class Backend {
 public:
  virtual ~Backend() = default;

  virtual const BackendDevice& device() const = 0;

  virtual Buffer allocate(std::int64_t bytes) = 0;
  virtual void upload(std::byte* device, const std::byte* host, std::int64_t bytes) = 0;

  virtual void gemm(const GemmShape& shape, const std::byte* a, const std::byte* b, std::byte* c) = 0;
  virtual void attention_forward(const AttentionShape& shape, const AttentionForwardArgs& args) = 0;
  virtual void attention_backward(const AttentionShape& shape, const AttentionBackwardArgs& args) = 0;
  virtual void memory_bound(const MemoryBoundShape& shape, const std::byte* in, std::byte* out) = 0;
  // The kernel family attention of `shape` runs as (measurement files and profiles key on it):
  // `cudnn` where cuDNN's fused attention runs it, `any` for weft's own kernels.
  virtual Kernel attention_kernel(const AttentionShape&) const { return Kernel::any; }

  virtual void open_span(std::uint32_t id) = 0;
  virtual void issued_span(std::uint32_t id) = 0;
  virtual void close_span(std::uint32_t id) = 0;
  virtual void synchronize() = 0;
  // The longest synchronize() waits for communication before it gives up with an error naming
  // the op (on the CPU, MPI requests enforce their deadlines themselves).
  virtual void set_wait_limit(std::chrono::seconds) {}
  virtual std::vector<TimedSpan> take_spans() = 0;
  // What the span timing received but could not attribute to a span, for an error that says a
  // span is missing (empty when there is nothing to say).
  virtual std::string unattributed_timing() const { return {}; }

  // The communicator over every rank of the job, built over `world` (the MPI job that started
  // the ranks): MPI itself on the CPU, NCCL bootstrapped through it on a GPU.
  virtual std::unique_ptr<Communicator> world_communicator(Communicator& world) = 0;
};

}  // namespace weft
