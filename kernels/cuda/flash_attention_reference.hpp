#pragma once

#include "kernels/kernel_shapes.hpp"

namespace weft::cuda {

// weft's flash-attention kernels run on the host: the same tiles, in the same order, through
// the same tile math (flash_attention_tiles.hpp), one block after another and one thread's row
// after another. Tensors are fp32 in the layout of AttentionShape (its dtype is not read); this
// is what the CPU tests compare with a direct computation of attention.
void flash_attention_forward_reference(const AttentionShape& shape, const float* q, const float* k, const float* v,
                                       float* o, float* lse);

void flash_attention_backward_reference(const AttentionShape& shape, const float* q, const float* k, const float* v,
                                        const float* o, const float* lse, const float* d_o, float* d_q, float* d_k,
                                        float* d_v);

}  // namespace weft::cuda
