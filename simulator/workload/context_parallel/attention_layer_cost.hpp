#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "cost_models/cost_model.hpp"
#include "simulator/workload/model_spec.hpp"
#include "simulator/workload/modules/self_attention.hpp"
#include "simulator/workload/step.hpp"

namespace weft {

// What one rank of a context-parallel group holds of a sequence: its query tokens, and the tiles
// of the mask its queries touch.
struct RankShare {
  std::int64_t tokens = 0;
  std::int64_t tiles = 0;
};

// Each rank's share when block i of `tile` tokens (the last one may be partial) goes to rank
// `rank_of_block[i]`.
std::vector<RankShare> rank_shares(std::span<const int> rank_of_block, std::span<const std::int64_t> block_tiles,
                                   std::int64_t tokens, std::int64_t tile, int ranks);

struct LayerTime {
  TimeNs forward = 0;
  TimeNs backward = 0;  // input and weight gradients
};

// The compute of one self-attention layer on a rank of a context-parallel group that gathers the
// whole sequence's keys and values (Llama 3's and Cornstarch's all-gather attention, papers/004
// §5.3): the QKV projection, rotary embedding and output projection of the rank's own tokens as
// weft's layer emits them, and attention of its queries over the tiles of the mask they touch, as a
// block-sparse kernel computes it (whole tiles). The gather itself and the TP collectives are not
// in it.
class AttentionLayerCost {
 public:
  // `context` gives TP, the dtype and the kernels; `sequence_tokens` the whole sequence, whose keys
  // and values every rank reads.
  AttentionLayerCost(const ModelSpec& model, const ShardContext& context, std::int64_t sequence_tokens,
                     std::int64_t tile, const CostModel& cost, const DeviceSpec& gpu);

  LayerTime rank_time(const RankShare& share) const;

 private:
  // The attention of `share`'s queries over its tiles: the dense step's work with as many keys per
  // query as the tiles hold, and the other ranks' keys and values read besides its own.
  void mask_attention(Step& core, const RankShare& share) const;

  ModelSpec model_;
  ShardContext context_;
  std::int64_t sequence_tokens_;
  std::int64_t tile_;
  const CostModel& cost_;
  const DeviceSpec& gpu_;
  SelfAttention layer_;
};

}  // namespace weft
