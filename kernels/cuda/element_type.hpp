#pragma once

namespace weft {
namespace cuda {

// The tensor element types weft's CUDA kernels load and store (they compute in fp32).
enum class ElementType { fp32, fp16, bf16 };

}  // namespace cuda
}  // namespace weft
