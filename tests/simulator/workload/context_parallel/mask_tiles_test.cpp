#include "simulator/workload/context_parallel/mask_tiles.hpp"

#include <catch2/catch.hpp>

#include <random>

#include "simulator/workload/context_parallel/mask_patterns.hpp"

namespace weft {
namespace {

// Every query against every key of each tile, the definitions, O(tokens^2): the non-empty tiles of
// each row block, and how many of them are neither empty nor full.
struct PairCount {
  std::vector<std::int64_t> nonempty;
  std::vector<std::int64_t> partial;
};

PairCount count_every_pair(const BitfieldMask& mask, std::int64_t tile) {
  const std::int64_t n = mask.tokens();
  const std::int64_t blocks = (n + tile - 1) / tile;
  PairCount count{std::vector<std::int64_t>(static_cast<std::size_t>(blocks), 0),
                  std::vector<std::int64_t>(static_cast<std::size_t>(blocks), 0)};
  for (std::int64_t row = 0; row < blocks; ++row) {
    for (std::int64_t column = 0; column < blocks; ++column) {
      bool any = false;
      bool all = true;
      for (std::int64_t q = row * tile; q < std::min(n, (row + 1) * tile); ++q) {
        for (std::int64_t k = column * tile; k < std::min(n, (column + 1) * tile); ++k) {
          const bool attends = mask.attends(q, k);
          any = any || attends;
          all = all && attends;
        }
      }
      if (any) ++count.nonempty[static_cast<std::size_t>(row)];
      if (any && !all) ++count.partial[static_cast<std::size_t>(row)];
    }
  }
  return count;
}

TEST_CASE("a causal mask's row block r touches r + 1 tiles, the diagonal's partial", "[context_parallel]") {
  BitfieldMaskBuilder builder;
  builder.causal(4 * 128);
  const BitfieldMask mask = builder.take();
  const RowBlockTiles tiles = tiles_per_row_block(mask, 128);
  CHECK(tiles.nonempty == std::vector<std::int64_t>{1, 2, 3, 4});
  CHECK(tiles.partial == std::vector<std::int64_t>{1, 1, 1, 1});
}

TEST_CASE("an encoder span inside one tile touches only its own tiles", "[context_parallel]") {
  BitfieldMaskBuilder builder;
  builder.causal(100);
  builder.bidirectional(20);  // tokens 100-119, in tile 0
  builder.causal(136);        // to 256: tile 1
  // Row block 0: its text and the span attend tile 0 only. Row block 1: text attending tiles 0 and 1.
  CHECK(tiles_per_row_block(builder.take(), 128).nonempty == std::vector<std::int64_t>{1, 2});
}

TEST_CASE("tile counts over runs equal the counts over every pair", "[context_parallel]") {
  const auto pattern = GENERATE(MaskPattern::prefix_lm, MaskPattern::encoder_embedded, MaskPattern::prefix_lm_document,
                                MaskPattern::multimodal_packed);
  const std::int64_t tile = GENERATE(32, 64, 100);
  std::mt19937_64 random(3);
  for (int draw = 0; draw < 3; ++draw) {
    const BitfieldMask mask = random_mask(pattern, 1100 + 300 * draw, random);  // partial last tiles
    const PairCount every_pair = count_every_pair(mask, tile);
    const RowBlockTiles tiles = tiles_per_row_block(mask, tile);
    CHECK(tiles.nonempty == every_pair.nonempty);
    CHECK(tiles.partial == every_pair.partial);
  }
}

}  // namespace
}  // namespace weft
