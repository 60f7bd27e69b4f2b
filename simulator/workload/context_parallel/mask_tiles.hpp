#pragma once

#include <cstdint>
#include <vector>

#include "simulator/workload/context_parallel/bitfield_mask.hpp"

namespace weft {

// For each row block of `tile` consecutive queries, how many `tile` x `tile` tiles of the mask hold
// at least one query that attends a key: what a block-sparse attention kernel computes (it skips
// the empty tiles and computes the others whole), and what Cornstarch's token distribution
// balances (papers/004 §4.3.2: a token's workload is its row of the mask, counted in the kernel's
// tiles). The last block may be partial.
std::vector<std::int64_t> nonempty_tiles_per_row_block(const BitfieldMask& mask, std::int64_t tile);

// Of those, the tiles where not every query attends every key: a kernel evaluates the mask in them,
// element by element (FlexAttention's partial blocks), where in a full tile it does not.
std::int64_t partial_tiles(const BitfieldMask& mask, std::int64_t tile);

}  // namespace weft
