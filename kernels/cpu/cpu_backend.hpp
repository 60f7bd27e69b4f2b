#pragma once

#include <unordered_map>
#include <vector>

#include "kernels/backend.hpp"

namespace weft::cpu {

// The CPU backend: Eigen GEMM and attention, the memory-bound kernel, spans on the monotonic
// clock. Kernels use `threads` OpenMP threads (one per core a rank owns).
class CpuBackend final : public Backend {
 public:
  CpuBackend(int threads, int ranks_per_node = 1);

  const BackendDevice& device() const override { return device_; }

  Buffer allocate(std::int64_t bytes) override;
  void upload(std::byte* device, const std::byte* host, std::int64_t bytes) override;

  void gemm(const GemmShape& shape, const std::byte* a, const std::byte* b, std::byte* c) override;
  void attention_forward(const AttentionShape& shape, const AttentionForwardArgs& args) override;
  void attention_backward(const AttentionShape& shape, const AttentionBackwardArgs& args) override;
  void memory_bound(const MemoryBoundShape& shape, const std::byte* in, std::byte* out) override;

  void open_span(std::uint32_t id) override;
  void issued_span(std::uint32_t) override {}
  void close_span(std::uint32_t id) override;
  void synchronize() override {}
  std::vector<TimedSpan> take_spans() override;
  // Now, on the clock spans are reported in.
  std::int64_t clock_ns() const;

  std::unique_ptr<Communicator> world_communicator(Communicator& world) override;

 private:
  void check_dtype(Dtype dtype) const;

  BackendDevice device_;
  std::unordered_map<std::uint32_t, std::int64_t> open_;
  std::vector<TimedSpan> closed_;
};

}  // namespace weft::cpu
