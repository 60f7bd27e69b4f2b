#include "simulator/workload/context_parallel/attention_layer_cost.hpp"

namespace weft {

AttentionLayerCost::AttentionLayerCost(const ModelSpec& model, const ShardContext& context,
                                       std::int64_t sequence_tokens, std::int64_t tile, bool causal_mask,
                                       const CostModel& cost, const DeviceSpec& gpu)
    : model_(model),
      context_(context),
      sequence_tokens_(sequence_tokens),
      tile_(tile),
      cost_(cost),
      gpu_(gpu),
      layer_("attention", model_, ContextParallelAlgorithm::allgather) {
  context_.cp = 1;
  context_.micro_batch = 1;
  context_.attention_span = 0;
  context_.causal_share = causal_mask;
}

LayerTime AttentionLayerCost::rank_time(const RankShare& share) const {
  LayerTime time;
  if (share.tokens == 0) return time;
  // The rank's queries attend as many keys each as its tiles hold; they read the other ranks' keys
  // and values besides their own (and write their gradients).
  ShardContext context = context_;
  context.seq_len = share.tokens;
  context.attention_share = share.tile_work() * static_cast<double>(tile_ * tile_) /
                            (static_cast<double>(share.tokens) * static_cast<double>(share.tokens));
  const Bytes other_kv = (sequence_tokens_ - share.tokens) * 2 * (model_.kv_heads / context_.tp) * model_.head_dim() *
                         context_.element_bytes();
  std::vector<Step> steps;
  layer_.emit(context, "", steps);
  for (Step& step : steps) {
    if (step.comm) continue;  // TP collectives: not the rank's compute
    if (step.attention_core) {
      if (share.tiles == 0) continue;
      step.forward->memory_bytes += other_kv;
      step.backward->memory_bytes += 2 * other_kv;
    }
    if (step.forward) time.forward += cost_.duration(*step.forward, gpu_);
    if (step.backward) time.backward += cost_.duration(*step.backward, gpu_);
    if (step.weight_grad) time.backward += cost_.duration(*step.weight_grad, gpu_);
  }
  return time;
}

}  // namespace weft
