#pragma once

#include <memory>

#include "kernels/backend.hpp"
#include "kernels/cuda/comm_streams.hpp"
#include "kernels/cuda/cublaslt_gemm.hpp"
#if WEFT_HAVE_CUDNN
#include "kernels/cuda/cudnn_attention.hpp"
#endif
#if WEFT_HAVE_NCCL
#include "kernels/cuda/nccl_registry.hpp"
#endif
#include "kernels/cuda/kernel_timeline.hpp"

namespace weft::cuda {

// The CUDA backend: cuBLASLt GEMMs, cuDNN's fused attention (weft's own flash-attention kernel
// where cuDNN cannot run a shape, or weft was built without cuDNN), weft's memory-bound kernel, NCCL
// communication, kernel times from CUPTI (or CUDA events, when a profiler holds CUPTI). It runs on device `device`.
class CudaBackend final : public Backend {
 public:
  explicit CudaBackend(int device);
  ~CudaBackend() override;

  const BackendDevice& device() const override { return device_; }

  Buffer allocate(std::int64_t bytes) override;
  void upload(std::byte* device, const std::byte* host, std::int64_t bytes) override;

  void gemm(const GemmShape& shape, const std::byte* a, const std::byte* b, std::byte* c) override;
  void attention_forward(const AttentionShape& shape, const AttentionForwardArgs& args) override;
  void attention_backward(const AttentionShape& shape, const AttentionBackwardArgs& args) override;
  void memory_bound(const MemoryBoundShape& shape, const std::byte* in, std::byte* out) override;
  Kernel attention_kernel(const AttentionShape& shape) const override;

  void open_span(std::uint32_t id) override { timeline_->push(id); }
  void issued_span(std::uint32_t) override { timeline_->pop(); }
  void close_span(std::uint32_t) override {}
  void synchronize() override;
  void set_wait_limit(std::chrono::seconds limit) override { wait_limit_ = limit; }
  std::vector<TimedSpan> take_spans() override { return timeline_->collect(); }
  std::string unattributed_timing() const override { return timeline_->unattributed(); }

  std::unique_ptr<Communicator> world_communicator(Communicator& world) override;

 private:
  // Scratch for the attention backward pass (fp32 dQ accumulator and row deltas), grown on use.
  float* scratch(std::int64_t bytes);

  BackendDevice device_;
  CommStreams streams_;
  std::unique_ptr<KernelTimeline> timeline_;
  std::unique_ptr<CublasLtGemm> gemm_;
#if WEFT_HAVE_CUDNN
  std::unique_ptr<CudnnAttention> cudnn_;
#endif
  int compute_capability_major_ = 0;
  long max_grid_x_ = 0;                 // blocks a launch's x dimension may have
  std::string attention_kernel_limit_;  // why weft's attention kernel cannot run here; empty if it can
#if WEFT_HAVE_NCCL
  std::unique_ptr<NcclRegistry> nccl_;  // the communicators, once world_communicator made them
#endif
  std::chrono::seconds wait_limit_{120};
  Buffer scratch_;
};

}  // namespace weft::cuda
