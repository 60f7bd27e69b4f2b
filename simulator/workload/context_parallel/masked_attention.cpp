#include "simulator/workload/context_parallel/masked_attention.hpp"

#include <algorithm>
#include <map>
#include <mutex>
#include <tuple>
#include <vector>

#include "simulator/workload/context_parallel/mask_tiles.hpp"

namespace weft {
namespace {

double compute_share(const MaskedAttention& masked, std::int64_t tokens, int ranks) {
  double slowest = 0.0;
  for (int index = 0; index < kScenarioMasks; ++index) {
    std::mt19937_64 random = mask_random(kScenarioMaskSeed, masked.pattern, tokens, index);
    const BitfieldMask mask = random_mask(masked.pattern, tokens, random);
    const RowBlockTiles tiles = tiles_per_row_block(mask, kScenarioMaskTile);
    const std::vector<int> rank_of = assign_blocks(masked.distribution, tiles.nonempty, ranks, random);
    double most = 0.0;
    for (const RankShare& share :
         rank_shares(rank_of, tiles.nonempty, tiles.partial, tokens, kScenarioMaskTile, ranks)) {
      most = std::max(most, share.tile_work());
    }
    slowest += most / kScenarioMasks;
  }
  const double pairs = slowest * static_cast<double>(kScenarioMaskTile * kScenarioMaskTile);
  return pairs * ranks / (static_cast<double>(tokens) * static_cast<double>(tokens));
}

}  // namespace

double slowest_rank_attention_share(const MaskedAttention& masked, std::int64_t tokens, int ranks) {
  using Key = std::tuple<MaskPattern, TokenDistribution, std::int64_t, int>;
  static std::mutex mutex;
  static std::map<Key, double> computed;
  const Key key{masked.pattern, masked.distribution, tokens, ranks};
  const std::lock_guard<std::mutex> lock(mutex);
  if (const auto known = computed.find(key); known != computed.end()) return known->second;
  return computed.emplace(key, compute_share(masked, tokens, ranks)).first->second;
}

}  // namespace weft
