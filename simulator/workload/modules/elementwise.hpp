#pragma once

#include "simulator/workload/modules/linear.hpp"

namespace weft {

// Per-row element counts of a memory-bound op (rotary embedding, activation, residual add,
// dropout, modulation). Widths are in elements of the model dtype, masks in bytes.
struct ElementwiseShape {
  Rows rows = Rows::sharded_tokens;
  std::int64_t input_width = 0;   // read in forward (all inputs together)
  std::int64_t output_width = 0;  // written in forward
  std::int64_t saved_width = 0;   // kept for backward
  std::int64_t mask_bytes = 0;    // one-byte dropout mask elements kept for backward
  bool tp_split = false;          // the widths are divided over the TP group
  bool has_input_gradient = true;
  Kernel kernel = Kernel::any;  // the forward's kernel, where a profile may know it
};

// The per-row shape of a known elementwise kernel over rows of `width` output elements: GeLU
// (keeps its input), the residual add (reads two), dropout (keeps a one-byte mask) and SwiGLU
// (reads and keeps 2 x width: the gate and the up projection).
ElementwiseShape elementwise_kernel_shape(Kernel kernel, std::int64_t width);

// The forward op of `shape` over `rows` rows whose widths are divided by `split`; `kernels` says
// whether SwiGLU runs fused.
OpWork elementwise_forward_work(const ElementwiseShape& shape, std::int64_t rows, std::int64_t split, Dtype dtype,
                                const KernelChoices& kernels = {});

// An op that streams its inputs once: the forward reads inputs and writes outputs; the backward
// reads the output gradient and what was saved, and writes the input gradient.
class Elementwise : public Module {
 public:
  Elementwise(std::string name, ElementwiseShape shape) : Module(std::move(name)), shape_(shape) {}
  void emit(const ShardContext& context, const std::string& prefix, std::vector<Step>& steps) const override;

 private:
  ElementwiseShape shape_;
};

}  // namespace weft
