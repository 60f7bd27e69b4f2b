#include "simulator/workload/modules/attention_core.hpp"

#include <algorithm>
#include <cmath>

#include "simulator/workload/modules/op_factory.hpp"

namespace weft {

void AttentionCore::emit(const ShardContext& context, const std::string& prefix, std::vector<Step>& steps) const {
  const std::int64_t heads = model_.heads / context.tp;
  const std::int64_t kv_heads = model_.kv_heads / context.tp;
  const std::int64_t head_dim = model_.head_dim();
  const std::int64_t queries = context.tokens();                    // this rank's query tokens
  const std::int64_t keys = context.micro_batch * context.seq_len;  // keys they attend to (all samples)
  const std::int64_t keys_per_sample = context.attention_span > 0 ? context.attention_span : context.seq_len;
  const Bytes element = context.element_bytes();
  const bool ring = context.cp > 1 && cp_algorithm_ == ContextParallelAlgorithm::ring;

  if (context.cp > 1 && !ring) {
    // All-gather the keys and values of the whole sequence over the CP group first.
    Step gather;
    gather.name = step_name(prefix, "kv_allgather");
    gather.comm = CommGroupKind::cp;
    const Bytes kv = keys * 2 * kv_heads * head_dim * element;
    gather.forward = communication_work(OpClass::allgather, kv);
    gather.backward = communication_work(OpClass::reducescatter, kv);
    gather.output_bytes = kv;
    steps.push_back(std::move(gather));
  }

  const double model_flops =
      4.0 * static_cast<double>(queries) * static_cast<double>(keys_per_sample) * static_cast<double>(heads * head_dim);
  const bool flash = model_.attention == AttentionKernel::flash && context.kernels.attention != Kernel::unfused;
  // A fused kernel skips the masked tiles; an unfused one computes every score. A causal kernel
  // computes half the keys it is given.
  const bool masked = flash && context.attention_share > 0.0;
  const bool causal_kernel = masked ? context.causal_share && model_.causal() : model_.causal();
  const double given = masked ? context.attention_share * (causal_kernel ? 2.0 : 1.0) : 1.0;
  const std::int64_t attended = std::max<std::int64_t>(1, std::llround(given * static_cast<double>(keys_per_sample)));
  const double executed =
      model_flops * static_cast<double>(attended) / static_cast<double>(keys_per_sample) * (causal_kernel ? 0.5 : 1.0);
  const int causal_shape = causal_kernel ? 1 : 0;
  const Bytes q_and_o = 2 * queries * heads * head_dim * element;
  const Bytes kv_read = keys * 2 * kv_heads * head_dim * element;
  const Bytes scores = heads * queries * keys_per_sample;  // elements of the s x s matrices on this rank
  const Bytes score_traffic = flash ? 0 : 6 * scores * element;

  Step step;
  step.name = step_name(prefix, "");
  step.attention_core = true;
  OpWork forward =
      memory_bound_work(OpClass::attention_fwd, q_and_o + kv_read + score_traffic, executed, context.dtype,
                        {context.micro_batch, heads, queries / context.micro_batch, attended, head_dim, causal_shape});
  forward.kernel = flash ? context.kernels.attention : Kernel::unfused;
  if (kv_heads > 0 && kv_heads != heads) forward.shape.push_back(kv_heads);  // grouped-query attention
  OpWork backward = forward;
  backward.op_class = OpClass::attention_bwd;
  backward.flops = executed * (flash ? 2.5 : 2.0);
  backward.memory_bytes = 2 * (q_and_o + kv_read) + score_traffic;
  step.forward = std::move(forward);
  step.backward = std::move(backward);
  step.model_flops = model_flops;
  step.output_bytes = queries * heads * head_dim * element;
  // Q, K and V of the rank's own tokens.
  const Bytes qkv = queries * (heads + 2 * kv_heads) * head_dim * element;
  if (flash) {
    step.saved_bytes = qkv + heads * queries * 4;  // + fp32 log-sum-exp per query and head
    // Per-op checkpointing keeps the kernel's output and log-sum-exp (the SDPA kernels' outputs).
    step.op_checkpoint_bytes = step.output_bytes + heads * queries * 4;
    step.op_recompute_share = 0.0;
  } else {
    const bool dropout = model_.dropout > 0.0;
    // Softmax output (2 bytes), dropout mask (1 byte) and dropout output (2 bytes) per score.
    step.recomputable_bytes = scores * (2 + (dropout ? 1 + 2 : 0));
    step.saved_bytes = qkv + step.recomputable_bytes;
  }
  if (ring) {
    step.context_parallel_chunks = context.cp;
    step.context_parallel_bytes = queries * 2 * kv_heads * head_dim * element;
    step.comm = CommGroupKind::cp;
  }
  steps.push_back(std::move(step));
}

}  // namespace weft
