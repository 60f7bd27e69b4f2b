#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "simulator/workload/context_parallel/attention_layer_cost.hpp"
#include "simulator/workload/context_parallel/mask_patterns.hpp"
#include "simulator/workload/context_parallel/token_distribution.hpp"

namespace weft {

// One attention layer on the ranks of a context-parallel group, over random masks of one pattern
// and length, under each token distribution: Cornstarch's evaluation of its distribution
// (papers/004 §6.5, Table 4), which times every rank's layer and reports the slowest rank's.
struct BalanceCase {
  MaskPattern pattern = MaskPattern::causal;
  std::int64_t tokens = 0;
};

struct DistributionOutcome {
  TokenDistribution distribution = TokenDistribution::lpt;
  // Means over the masks of the slowest rank's time, and of the slowest rank's tiles over the
  // ranks' mean (1: balanced).
  double forward_s = 0.0;
  double backward_s = 0.0;
  double tile_imbalance = 0.0;
};

struct BalanceRow {
  BalanceCase study;
  double density = 0.0;  // mean fraction of the mask's tiles that are not empty
  double partial = 0.0;  // mean fraction of those where not every query attends every key
  std::vector<DistributionOutcome> outcomes;
};

struct BalanceStudy {
  int ranks = 1;
  std::int64_t tile = 128;
  int masks = 1;
  std::uint64_t seed = 0;
  std::vector<TokenDistribution> distributions;
};

// The layer the study times (AttentionLayerCost's arguments but the sequence's length).
struct BalanceLayer {
  const ModelSpec& model;
  ShardContext context;
  const CostModel& cost;
  const DeviceSpec& gpu;
};

// Each case's row; mask m of a case is drawn from a generator seeded by (seed, pattern, tokens,
// m), so a case's row does not depend on the other cases. `progress(done, total)` after each mask.
std::vector<BalanceRow> run_balance_study(const BalanceStudy& study, const std::vector<BalanceCase>& cases,
                                          const BalanceLayer& layer,
                                          const std::function<void(std::size_t, std::size_t)>& progress);

}  // namespace weft
