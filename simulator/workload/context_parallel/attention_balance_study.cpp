#include "simulator/workload/context_parallel/attention_balance_study.hpp"

#include <algorithm>
#include <numeric>
#include <random>

#include "simulator/workload/context_parallel/mask_tiles.hpp"

namespace weft {
namespace {

// The slowest rank's times and tile imbalance under one distribution of one mask.
DistributionOutcome outcome_of(TokenDistribution distribution, const RowBlockTiles& tiles, const BalanceStudy& study,
                               std::int64_t tokens, const AttentionLayerCost& cost, std::mt19937_64& random) {
  const std::vector<int> rank_of = assign_blocks(distribution, tiles.nonempty, study.ranks, random);
  const std::vector<RankShare> shares =
      rank_shares(rank_of, tiles.nonempty, tiles.partial, tokens, study.tile, study.ranks);
  DistributionOutcome outcome{.distribution = distribution};
  std::int64_t most_tiles = 0;
  std::int64_t all_tiles = 0;
  TimeNs forward = 0;
  TimeNs backward = 0;
  for (const RankShare& share : shares) {
    const LayerTime time = cost.rank_time(share);
    forward = std::max(forward, time.forward);
    backward = std::max(backward, time.backward);
    most_tiles = std::max(most_tiles, share.tiles);
    all_tiles += share.tiles;
  }
  outcome.forward_s = static_cast<double>(forward) / kNsPerSecond;
  outcome.backward_s = static_cast<double>(backward) / kNsPerSecond;
  outcome.tile_imbalance =
      all_tiles > 0 ? static_cast<double>(most_tiles) * study.ranks / static_cast<double>(all_tiles) : 1.0;
  return outcome;
}

}  // namespace

std::vector<BalanceRow> run_balance_study(const BalanceStudy& study, const std::vector<BalanceCase>& cases,
                                          const BalanceLayer& layer,
                                          const std::function<void(std::size_t, std::size_t)>& progress) {
  std::vector<BalanceRow> rows;
  const std::size_t total = cases.size() * static_cast<std::size_t>(study.masks);
  std::size_t done = 0;
  for (const BalanceCase& balance_case : cases) {
    const AttentionLayerCost cost(layer.model, layer.context, balance_case.tokens, study.tile,
                                  balance_case.pattern == MaskPattern::causal, layer.cost, layer.gpu);
    BalanceRow row{.study = balance_case, .density = 0.0, .partial = 0.0, .outcomes = {}};
    for (const TokenDistribution distribution : study.distributions)
      row.outcomes.push_back({.distribution = distribution});
    for (int mask = 0; mask < study.masks; ++mask) {
      std::mt19937_64 random = mask_random(study.seed, balance_case.pattern, balance_case.tokens, mask);
      const BitfieldMask drawn = random_mask(balance_case.pattern, balance_case.tokens, random);
      const RowBlockTiles tiles = tiles_per_row_block(drawn, study.tile);
      const std::int64_t nonempty = std::accumulate(tiles.nonempty.begin(), tiles.nonempty.end(), std::int64_t{0});
      const std::int64_t partial = std::accumulate(tiles.partial.begin(), tiles.partial.end(), std::int64_t{0});
      const auto blocks = static_cast<double>(tiles.nonempty.size());
      row.density += static_cast<double>(nonempty) / (blocks * blocks) / study.masks;
      row.partial += static_cast<double>(partial) / static_cast<double>(nonempty) / study.masks;
      for (DistributionOutcome& outcome : row.outcomes) {
        const DistributionOutcome one =
            outcome_of(outcome.distribution, tiles, study, balance_case.tokens, cost, random);
        outcome.forward_s += one.forward_s / study.masks;
        outcome.backward_s += one.backward_s / study.masks;
        outcome.tile_imbalance += one.tile_imbalance / study.masks;
      }
      progress(++done, total);
    }
    rows.push_back(std::move(row));
  }
  return rows;
}

}  // namespace weft
