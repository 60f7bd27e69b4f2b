#include "simulator/workload/modules/transformer_layer.hpp"

#include "simulator/workload/modules/elementwise.hpp"
#include "simulator/workload/modules/linear.hpp"
#include "simulator/workload/modules/mlp.hpp"
#include "simulator/workload/modules/norm.hpp"
#include "simulator/workload/modules/self_attention.hpp"

namespace weft {
namespace {

// x + dropout(sublayer(x)): reads both, writes the sum; keeps the dropout mask.
ElementwiseShape residual_add(const ModelSpec& model) {
  ElementwiseShape shape = elementwise_kernel_shape(Kernel::add, model.hidden);
  shape.mask_bytes = model.dropout > 0.0 ? model.hidden : 0;
  return shape;
}

// DiT modulation: x * (1 + scale) + shift (after a norm) or x * gate (before a residual); keeps
// its input for the gradient of the modulation vectors.
ElementwiseShape modulation(const ModelSpec& model) {
  ElementwiseShape shape;
  shape.input_width = model.hidden;
  shape.output_width = model.hidden;
  shape.saved_width = model.hidden;
  return shape;
}

}  // namespace

TransformerLayer::TransformerLayer(std::string name, const ModelSpec& model, ContextParallelAlgorithm cp_algorithm)
    : Sequential(std::move(name)) {
  const bool dit = model.kind == ModelKind::dit;
  const std::int64_t h = model.hidden;
  if (dit) add<Linear>("adaln", h, 6 * h, true, TpSplit::none, Rows::samples);
  add<Norm>("attn_norm", h, model.norm);
  if (dit) add<Elementwise>("attn_modulate", modulation(model));
  add<SelfAttention>("attn", model, cp_algorithm);
  if (dit) add<Elementwise>("attn_gate", modulation(model));
  add<Elementwise>("attn_residual", residual_add(model));
  add<Norm>("mlp_norm", h, model.norm);
  if (dit) add<Elementwise>("mlp_modulate", modulation(model));
  add<Mlp>("mlp", model);
  if (dit) add<Elementwise>("mlp_gate", modulation(model));
  add<Elementwise>("mlp_residual", residual_add(model));
}

}  // namespace weft
