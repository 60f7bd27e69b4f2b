#pragma once

#include <cstdint>

#include "simulator/workload/context_parallel/mask_patterns.hpp"
#include "simulator/workload/context_parallel/token_distribution.hpp"

namespace weft {

// A training scenario's attention mask and how its context-parallel group deals the tokens
// (training.attention_mask, parallel.cp_distribution; docs/context-parallel.md).
struct MaskedAttention {
  MaskPattern pattern = MaskPattern::causal;
  TokenDistribution distribution = TokenDistribution::zigzag;
};

// The masks a scenario's share is averaged over, and the attention kernel's tile.
inline constexpr int kScenarioMasks = 50;
inline constexpr std::uint64_t kScenarioMaskSeed = 1;
inline constexpr std::int64_t kScenarioMaskTile = 128;
// The sequences a scenario's mask is drawn over: its spans are 1/64 of a sequence and more; its
// tiles, which the share counts for 50 masks, grow as the square of it (2 s at the most). They
// are whole tiles, at least two per rank (zigzag deals 2 cp chunks).
inline constexpr std::int64_t kMinMaskedTokens = 1024;
inline constexpr std::int64_t kMaxMaskedTokens = std::int64_t{1} << 18;

// What the slowest of `ranks` CP ranks computes of a block-sparse attention over a sequence of
// `tokens`: its non-empty tiles (a partial one at kPartialTileCost) over its 1/ranks of the queries
// times every key, the mean over kScenarioMasks random masks of the pattern. For one rank, the
// mask's tile density. `tokens` is a multiple of kScenarioMaskTile, at least 2 x ranks of them.
// Computed once per argument set in a process (a sweep asks for it per plan; its threads wait for
// the one computing).
double slowest_rank_attention_share(const MaskedAttention& masked, std::int64_t tokens, int ranks);

}  // namespace weft
