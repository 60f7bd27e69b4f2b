#include "kernels/cpu/cpu_memory_bound.hpp"

#include <algorithm>
#include <array>

#include "kernels/cpu/element_conversion.hpp"

namespace weft::cpu {
namespace {

constexpr std::int64_t kBlock = 1024;

}  // namespace

void memory_bound(const MemoryBoundShape& shape, const std::byte* in, std::byte* out) {
  if (shape.outputs <= 0) return;
  const std::int64_t element = bytes_per_element(shape.dtype);
  const std::int64_t passes = (shape.inputs + shape.outputs - 1) / shape.outputs;
  const float scale = passes > 0 ? 1.0f / static_cast<float>(passes) : 1.0f;
  const int chained = shape.flops_per_output / 2;  // one fused multiply-add is two operations
  const std::int64_t blocks = (shape.outputs + kBlock - 1) / kBlock;
#pragma omp parallel for schedule(static)
  for (std::int64_t block = 0; block < blocks; ++block) {
    std::array<float, kBlock> sum{};
    std::array<float, kBlock> loaded;
    const std::int64_t first = block * kBlock;
    const std::int64_t width = std::min(kBlock, shape.outputs - first);
    for (std::int64_t pass = 0; pass < passes; ++pass) {
      const std::int64_t begin = pass * shape.outputs + first;
      const std::int64_t count = std::clamp<std::int64_t>(shape.inputs - begin, 0, width);
      widen(shape.dtype, in + begin * element, loaded.data(), count);
      for (std::int64_t i = 0; i < count; ++i) sum[static_cast<std::size_t>(i)] += loaded[static_cast<std::size_t>(i)];
    }
    // The arithmetic runs across the block, one step at a time, so that it vectorises as a
    // compiled elementwise kernel's does; per element, `chained` dependent steps would make
    // the op bound by the latency of each step.
    for (std::int64_t i = 0; i < width; ++i) sum[static_cast<std::size_t>(i)] *= scale;
    for (int f = 0; f < chained; ++f) {
      for (std::int64_t i = 0; i < width; ++i) {
        sum[static_cast<std::size_t>(i)] = sum[static_cast<std::size_t>(i)] * 0.999f + 0.001f;
      }
    }
    narrow(shape.dtype, sum.data(), out + first * element, width);
  }
}

}  // namespace weft::cpu
