#include "kernels/cpu/element_conversion.hpp"

#include <cstring>

#include <Eigen/Core>

namespace weft::cpu {
namespace {

template <class Half>
void widen_half(const std::byte* source, float* target, std::int64_t count) {
  const auto* in = reinterpret_cast<const Half*>(source);
  for (std::int64_t i = 0; i < count; ++i) target[i] = static_cast<float>(in[i]);
}

template <class Half>
void narrow_half(const float* source, std::byte* target, std::int64_t count) {
  auto* out = reinterpret_cast<Half*>(target);
  for (std::int64_t i = 0; i < count; ++i) out[i] = Half(source[i]);
}

}  // namespace

bool stores_dtype(Dtype dtype) { return dtype == Dtype::fp32 || dtype == Dtype::bf16 || dtype == Dtype::fp16; }

void widen(Dtype dtype, const std::byte* source, float* target, std::int64_t count) {
  switch (dtype) {
    case Dtype::bf16:
      return widen_half<Eigen::bfloat16>(source, target, count);
    case Dtype::fp16:
      return widen_half<Eigen::half>(source, target, count);
    default:
      std::memcpy(target, source, static_cast<std::size_t>(count) * sizeof(float));
  }
}

void narrow(Dtype dtype, const float* source, std::byte* target, std::int64_t count) {
  switch (dtype) {
    case Dtype::bf16:
      return narrow_half<Eigen::bfloat16>(source, target, count);
    case Dtype::fp16:
      return narrow_half<Eigen::half>(source, target, count);
    default:
      std::memcpy(target, source, static_cast<std::size_t>(count) * sizeof(float));
  }
}

}  // namespace weft::cpu
