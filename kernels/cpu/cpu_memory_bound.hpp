#pragma once

#include <cstddef>

#include "kernels/kernel_shapes.hpp"

namespace weft::cpu {

// The memory-bound op of MemoryBoundShape, a block of outputs at a time (parallel with OpenMP):
// the block's inputs are summed in fp32 in a buffer that stays in cache, so that every input
// crosses the memory bus once and every output once.
void memory_bound(const MemoryBoundShape& shape, const std::byte* in, std::byte* out);

}  // namespace weft::cpu
