#include "kernels/cpu/cpu_backend.hpp"

#include <omp.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <new>
#include <string>

#include <Eigen/Core>

#include "kernels/cpu/cpu_attention.hpp"
#include "kernels/cpu/cpu_device.hpp"
#include "kernels/cpu/cpu_gemm.hpp"
#include "kernels/cpu/cpu_memory_bound.hpp"
#include "kernels/cpu/element_conversion.hpp"
#include "simulator/core/input_error.hpp"

namespace weft::cpu {
namespace {

// Cache-line alignment, which Eigen's vectorized loads also want.
constexpr std::size_t kAlignment = 64;

}  // namespace

CpuBackend::CpuBackend(int threads, int ranks_per_node) : device_(describe_cpu(threads, ranks_per_node)) {
  omp_set_num_threads(threads);
  Eigen::setNbThreads(threads);
}

Buffer CpuBackend::allocate(std::int64_t bytes) {
  const auto size = (static_cast<std::size_t>(bytes) + kAlignment - 1) / kAlignment * kAlignment;
  void* memory = std::aligned_alloc(kAlignment, size > 0 ? size : kAlignment);
  if (memory == nullptr) throw std::bad_alloc();
  return Buffer(std::shared_ptr<std::byte>(static_cast<std::byte*>(memory), [](std::byte* p) { std::free(p); }), bytes);
}

void CpuBackend::upload(std::byte* device, const std::byte* host, std::int64_t bytes) {
  std::memcpy(device, host, static_cast<std::size_t>(bytes));
}

void CpuBackend::check_dtype(Dtype dtype) const {
  if (!stores_dtype(dtype)) {
    throw InputError("the cpu backend computes in fp32, bf16 and fp16, not " + std::string(kDtypeNames.name(dtype)));
  }
}

void CpuBackend::gemm(const GemmShape& shape, const std::byte* a, const std::byte* b, std::byte* c) {
  check_shape(shape);
  check_dtype(shape.dtype);
  cpu::gemm(shape, a, b, c);
}

void CpuBackend::attention_forward(const AttentionShape& shape, const AttentionForwardArgs& args) {
  check_shape(shape);
  check_dtype(shape.dtype);
  cpu::attention_forward(shape, args);
}

void CpuBackend::attention_backward(const AttentionShape& shape, const AttentionBackwardArgs& args) {
  check_shape(shape);
  check_dtype(shape.dtype);
  cpu::attention_backward(shape, args);
}

void CpuBackend::memory_bound(const MemoryBoundShape& shape, const std::byte* in, std::byte* out) {
  check_shape(shape);
  check_dtype(shape.dtype);
  cpu::memory_bound(shape, in, out);
}

std::int64_t CpuBackend::clock_ns() const {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

void CpuBackend::open_span(std::uint32_t id) { open_.try_emplace(id, clock_ns()); }

void CpuBackend::close_span(std::uint32_t id) {
  const std::int64_t end = clock_ns();
  const auto open = open_.find(id);
  if (open == open_.end()) return;
  closed_.push_back({id, open->second, end, end - open->second});  // the CPU is busy while the op runs
  open_.erase(open);
}

std::vector<TimedSpan> CpuBackend::take_spans() {
  std::vector<TimedSpan> spans = std::move(closed_);
  closed_.clear();
  return spans;
}

std::unique_ptr<Communicator> CpuBackend::world_communicator(Communicator& world) {
  return world.split(0, world.rank());
}

}  // namespace weft::cpu
