#pragma once

// Loading and storing tensor elements in fp32 arithmetic, for weft's CUDA kernels.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime_api.h>

#include "kernels/cuda/element_type.hpp"

namespace weft {
namespace cuda {

__device__ inline float to_float(float x) { return x; }
__device__ inline float to_float(__half x) { return __half2float(x); }
__device__ inline float to_float(__nv_bfloat16 x) { return __bfloat162float(x); }

template <class T>
__device__ inline T from_float(float x);
template <>
__device__ inline float from_float<float>(float x) {
  return x;
}
template <>
__device__ inline __half from_float<__half>(float x) {
  return __float2half_rn(x);
}
template <>
__device__ inline __nv_bfloat16 from_float<__nv_bfloat16>(float x) {
  return __float2bfloat16_rn(x);
}

inline unsigned blocks_for(long count, unsigned threads) {
  return static_cast<unsigned>((count + threads - 1) / threads);
}

// Calls fn(T{}) with T the element type `type` names, for launching a kernel template.
template <class Fn>
cudaError_t with_element_type(ElementType type, Fn&& fn) {
  switch (type) {
    case ElementType::fp32:
      return fn(float{});
    case ElementType::fp16:
      return fn(__half{});
    case ElementType::bf16:
      return fn(__nv_bfloat16{});
  }
  return cudaErrorInvalidValue;
}

}  // namespace cuda
}  // namespace weft
