#pragma once

#include <cstdint>
#include <vector>

#include "simulator/workload/context_parallel/bitfield_mask.hpp"

namespace weft {

// For each row block of `tile` consecutive queries, how many `tile` x `tile` tiles of the mask hold
// at least one query that attends a key (`nonempty`): what a block-sparse attention kernel computes
// (it skips the empty tiles and computes the others whole), and what Cornstarch's token distribution
// balances (papers/004 §4.3.2: a token's workload is its row of the mask, counted in the kernel's
// tiles); and how many of those are partial, where not every query attends every key (`partial`):
// a kernel evaluates the mask in them, element by element (FlexAttention's partial blocks), where
// in a full tile it does not. The last block may be partial.
struct RowBlockTiles {
  std::vector<std::int64_t> nonempty;
  std::vector<std::int64_t> partial;
};
RowBlockTiles tiles_per_row_block(const BitfieldMask& mask, std::int64_t tile);

// What a partial tile costs such a kernel, in full tiles: FlexAttention's forward on one H200 over
// the same 8,256 tiles of 128 x 128 (8 query heads on 1 key-value head, head size 128) took 1.960 ms
// with the mask evaluated in every tile and 1.433 ms with every tile full
// (scenarios/measurements/live/h200-2026-11-28/flex-tiles.json, made by tools/flex-tiles.py).
inline constexpr double kPartialTileCost = 1.37;

}  // namespace weft
