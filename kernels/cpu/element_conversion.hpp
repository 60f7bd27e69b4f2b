#pragma once

#include <cstddef>
#include <cstdint>

#include "simulator/core/dtype.hpp"

namespace weft::cpu {

// The CPU backend computes in fp32 and stores tensors in their dtype (fp32, bf16 or fp16), as a
// CPU without native 16-bit arithmetic runs mixed-precision training: 16-bit tensors are widened
// on load and rounded to nearest even on store.
bool stores_dtype(Dtype dtype);

void widen(Dtype dtype, const std::byte* source, float* target, std::int64_t count);
void narrow(Dtype dtype, const float* source, std::byte* target, std::int64_t count);

}  // namespace weft::cpu
