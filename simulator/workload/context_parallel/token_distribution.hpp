#pragma once

#include <cstdint>
#include <random>
#include <span>
#include <vector>

#include "simulator/core/enum_names.hpp"
#include "simulator/workload/context_parallel/mask_tiles.hpp"

namespace weft {

// How a sequence's tokens are dealt to the ranks of a context-parallel group, in blocks of the
// attention kernel's tile (papers/004 §2.3.2, §4.3.2, §5.3):
//  - ring: each rank a contiguous 1/G of the sequence (ring attention as first proposed);
//  - zigzag: the sequence in 2G chunks, rank i the i-th and the (2G-1-i)-th (balanced for a causal
//    mask only);
//  - random: each block to a rank by a random hash of its index, (a (i + o) + b) mod 2^31 mod G
//    with a drawn coprime to G, as Cornstarch's profiler assigns them; for G a power of two this
//    deals the blocks round robin from a random rank, with a random stride;
//  - lpt: Cornstarch's workload-balanced distribution (Appendix A): blocks in decreasing order of
//    their work, each to the rank with the least work so far (Graham's longest processing time
//    first; ties to the lower rank).
enum class TokenDistribution : std::uint8_t { lpt, random, ring, zigzag };

inline constexpr EnumNames<TokenDistribution, 4> kTokenDistributionNames({"lpt", "random", "ring", "zigzag"});

// The rank of each block, in sequence order, for `ranks` ranks; `block_work` is each block's work
// (lpt's key); `random` draws random's hash.
std::vector<int> assign_blocks(TokenDistribution distribution, std::span<const std::int64_t> block_work, int ranks,
                               std::mt19937_64& random);

// What one rank of a context-parallel group holds of a sequence: its query tokens, the tiles of the
// mask its queries touch, and how many of those are partial.
struct RankShare {
  std::int64_t tokens = 0;
  std::int64_t tiles = 0;
  std::int64_t partial_tiles = 0;

  // The kernel's work, in full tiles: a partial tile costs kPartialTileCost.
  double tile_work() const {
    return static_cast<double>(tiles) + (kPartialTileCost - 1.0) * static_cast<double>(partial_tiles);
  }
};

// Each rank's share when block i of `tile` tokens (the last one may be partial), whose queries touch
// `block_tiles[i]` tiles of which `block_partial[i]` are partial, goes to rank `rank_of_block[i]`.
std::vector<RankShare> rank_shares(std::span<const int> rank_of_block, std::span<const std::int64_t> block_tiles,
                                   std::span<const std::int64_t> block_partial, std::int64_t tokens, std::int64_t tile,
                                   int ranks);

}  // namespace weft
