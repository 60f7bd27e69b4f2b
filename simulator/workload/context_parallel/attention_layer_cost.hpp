#pragma once

#include <cstdint>
#include <vector>

#include "cost_models/cost_model.hpp"
#include "simulator/workload/context_parallel/token_distribution.hpp"
#include "simulator/workload/model_spec.hpp"
#include "simulator/workload/modules/self_attention.hpp"
#include "simulator/workload/step.hpp"

namespace weft {

struct LayerTime {
  TimeNs forward = 0;
  TimeNs backward = 0;  // input and weight gradients
};

// The compute of one self-attention layer on a rank of a context-parallel group that gathers the
// whole sequence's keys and values (Llama 3's and Cornstarch's all-gather attention, papers/004
// §5.3): the QKV projection, rotary embedding and output projection of the rank's own tokens as
// weft's layer emits them, and attention of its queries over the tiles of the mask they touch, as a
// block-sparse kernel computes it (whole tiles, a partial one at kPartialTileCost). For fused attention kernels only:
// an unfused one computes every score of the rank's queries against the whole sequence, which this layer does not emit.
// The gather itself and the TP collectives are not in it.
class AttentionLayerCost {
 public:
  // `context` gives TP, the dtype and the kernels; `sequence_tokens` the whole sequence, whose keys
  // and values every rank reads; `causal_mask`: the mask is the causal one, which a causal model's
  // causal kernel computes.
  AttentionLayerCost(const ModelSpec& model, const ShardContext& context, std::int64_t sequence_tokens,
                     std::int64_t tile, bool causal_mask, const CostModel& cost, const DeviceSpec& gpu);

  LayerTime rank_time(const RankShare& share) const;

 private:
  ModelSpec model_;
  ShardContext context_;
  std::int64_t sequence_tokens_;
  std::int64_t tile_;
  const CostModel& cost_;
  const DeviceSpec& gpu_;
  SelfAttention layer_;
};

}  // namespace weft
