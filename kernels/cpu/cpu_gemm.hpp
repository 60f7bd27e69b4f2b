#pragma once

#include <cstddef>

#include "kernels/kernel_shapes.hpp"

namespace weft::cpu {

// C = op(A) op(B) (GemmShape: row-major, in its layout) with Eigen's blocked GEMM (multithreaded through OpenMP);
// 16-bit operands are widened to fp32 first and the product rounded back.
void gemm(const GemmShape& shape, const std::byte* a, const std::byte* b, std::byte* c);

}  // namespace weft::cpu
