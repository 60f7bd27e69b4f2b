#include "simulator/workload/modules/transformer_layer.hpp"

#include <span>
#include <stdexcept>

#include "simulator/workload/modules/elementwise.hpp"
#include "simulator/workload/modules/linear.hpp"
#include "simulator/workload/modules/mlp.hpp"
#include "simulator/workload/modules/norm.hpp"
#include "simulator/workload/modules/op_factory.hpp"
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

// torchtitan's policy (torchtitan/parallelisms/parallelize_llama.py, 3bae958d, and the same at
// 9dec370a): within a checkpointed layer it saves the outputs of the SDPA kernels, of
// reduce_scatter_tensor and of aten.mm "except every second mm", counting the layer's matmuls in
// forward order; everything else runs again when the backward pass first needs it.
void mark_op_checkpoints(std::span<Step> steps, const std::vector<std::vector<std::int64_t>>& matmul_widths) {
  std::size_t linear = 0;
  int matmuls = 0;
  for (Step& step : steps) {
    if (!step.forward) continue;
    const OpClass op_class = step.forward->op_class;
    if (op_class == OpClass::reducescatter) {
      step.op_checkpoint_bytes = step.output_bytes;
      step.op_recompute_share = 0.0;
    }
    if (op_class != OpClass::gemm || !step.weight_grad) continue;
    if (linear == matmul_widths.size()) throw std::logic_error("transformer layer: more linear steps than matmuls");
    std::int64_t all = 0;
    std::int64_t kept = 0;
    for (const std::int64_t width : matmul_widths[linear++]) {
      all += width;
      if (++matmuls % 2 == 1) kept += width;
    }
    step.op_checkpoint_bytes = step.output_bytes * kept / all;
    step.op_recompute_share = static_cast<double>(all - kept) / static_cast<double>(all);
    if (kept > 0 && kept < all) {
      // The forward GEMM is [M, N, K] with N the output columns: those of the matmuls not kept.
      const OpWork& whole = *step.forward;
      const std::int64_t columns = whole.shape[1] * (all - kept) / all;
      step.op_recompute = gemm_work(whole.shape[0], columns, whole.shape[2], whole.dtype, whole.kernel);
    }
  }
  if (linear != matmul_widths.size()) throw std::logic_error("transformer layer: fewer linear steps than matmuls");
}

// The framework's time around one layer's pass (module calls, autograd, hooks), in which the
// device runs none of its kernels: charged before the layer's forward pass, after its backward
// pass, and before each forward pass run again for recomputation.
Step framework_step(const std::string& layer_prefix, TimeNs framework_ns) {
  OpWork work;
  work.op_class = OpClass::host;
  work.shape = {framework_ns};
  Step step;
  step.name = layer_prefix + "framework";
  step.forward = work;
  step.backward = work;
  return step;
}

}  // namespace

TransformerLayer::TransformerLayer(std::string name, const ModelSpec& model, ContextParallelAlgorithm cp_algorithm)
    : Sequential(std::move(name)) {
  const bool dit = model.kind == ModelKind::dit;
  const std::int64_t h = model.hidden;
  const std::int64_t q = model.attention_width();
  const std::int64_t kv = model.kv_width();
  const std::int64_t f = model.ffn_hidden;
  if (dit) matmul_widths_.push_back({6 * h});
  matmul_widths_.insert(matmul_widths_.end(), {{q, kv, kv}, {h}});
  if (model.activation == Activation::swiglu) {
    matmul_widths_.insert(matmul_widths_.end(), {{f, f}, {h}});
  } else {
    matmul_widths_.insert(matmul_widths_.end(), {{f}, {h}});
  }
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

void TransformerLayer::emit(const ShardContext& context, const std::string& prefix, std::vector<Step>& steps) const {
  if (context.kernels.layer_framework_ns > 0) {
    steps.push_back(framework_step(inner_prefix(prefix), context.kernels.layer_framework_ns));
  }
  const std::size_t first = steps.size();
  Sequential::emit(context, prefix, steps);
  mark_op_checkpoints(std::span(steps).subspan(first), matmul_widths_);
}

}  // namespace weft
