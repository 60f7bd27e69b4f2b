#include "simulator/workload/context_parallel/attention_layer_cost.hpp"

#include <cmath>

namespace weft {

std::vector<RankShare> rank_shares(std::span<const int> rank_of_block, std::span<const std::int64_t> block_tiles,
                                   std::int64_t tokens, std::int64_t tile, int ranks) {
  std::vector<RankShare> shares(static_cast<std::size_t>(ranks));
  for (std::size_t block = 0; block < rank_of_block.size(); ++block) {
    RankShare& share = shares[static_cast<std::size_t>(rank_of_block[block])];
    const std::int64_t first = static_cast<std::int64_t>(block) * tile;
    share.tokens += std::min(tile, tokens - first);
    share.tiles += block_tiles[block];
  }
  return shares;
}

AttentionLayerCost::AttentionLayerCost(const ModelSpec& model, const ShardContext& context,
                                       std::int64_t sequence_tokens, std::int64_t tile, const CostModel& cost,
                                       const DeviceSpec& gpu)
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
}

void AttentionLayerCost::mask_attention(Step& core, const RankShare& share) const {
  // Shape: {micro-batch, heads, queries, keys per query, head size, causal[, key heads]}.
  const double pairs = static_cast<double>(share.tiles) * static_cast<double>(tile_ * tile_);
  const auto keys = static_cast<std::int64_t>(std::llround(pairs / static_cast<double>(share.tokens)));
  const std::int64_t kv_heads = model_.kv_heads / context_.tp;
  const Bytes other_kv =
      (sequence_tokens_ - share.tokens) * 2 * kv_heads * model_.head_dim() * context_.element_bytes();
  for (OpWork* work : {&*core.forward, &*core.backward}) {
    const double dense =
        static_cast<double>(work->shape[2]) * static_cast<double>(work->shape[3]) * (work->shape[5] != 0 ? 0.5 : 1.0);
    work->flops *= static_cast<double>(share.tokens) * static_cast<double>(keys) / dense;
    work->shape[3] = keys;
    work->shape[5] = 0;
  }
  core.forward->memory_bytes += other_kv;
  core.backward->memory_bytes += 2 * other_kv;  // read, and their gradients written
}

LayerTime AttentionLayerCost::rank_time(const RankShare& share) const {
  LayerTime time;
  if (share.tokens == 0) return time;
  ShardContext context = context_;
  context.seq_len = share.tokens;
  std::vector<Step> steps;
  layer_.emit(context, "", steps);
  for (Step& step : steps) {
    if (step.comm) continue;  // TP collectives: not the rank's compute
    if (step.attention_core) mask_attention(step, share);
    if (step.forward) time.forward += cost_.duration(*step.forward, gpu_);
    if (step.backward) time.backward += cost_.duration(*step.backward, gpu_);
    if (step.weight_grad) time.backward += cost_.duration(*step.weight_grad, gpu_);
  }
  return time;
}

}  // namespace weft
