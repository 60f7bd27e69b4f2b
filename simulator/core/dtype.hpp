#pragma once

#include <cstdint>

#include "simulator/core/enum_names.hpp"

namespace weft {

// Numeric type an op computes in; selects the device's peak FLOP/s.
enum class Dtype : std::uint8_t { fp32, tf32, fp16, bf16, fp8, int8 };

inline constexpr EnumNames<Dtype, 6> kDtypeNames({"fp32", "tf32", "fp16", "bf16", "fp8", "int8"});
inline constexpr std::size_t kDtypeCount = kDtypeNames.size();

// Bytes per element as stored in memory (tf32 is stored as fp32).
constexpr int bytes_per_element(Dtype dtype) {
  switch (dtype) {
    case Dtype::fp32:
    case Dtype::tf32:
      return 4;
    case Dtype::fp16:
    case Dtype::bf16:
      return 2;
    case Dtype::fp8:
    case Dtype::int8:
      return 1;
  }
  return 0;
}

}  // namespace weft
