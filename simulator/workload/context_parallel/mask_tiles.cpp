#include "simulator/workload/context_parallel/mask_tiles.hpp"

#include <algorithm>

namespace weft {
namespace {

// Tokens in a row of equal words in one document, within one block.
struct WordRun {
  std::int64_t first = 0;
  std::int64_t last = 0;  // inclusive
  std::uint64_t word = 0;
  std::uint32_t document = 0;
};

// Whether some query of `queries` attends some key of `keys` (BitfieldMask::attends over runs).
bool any_attends(const WordRun& queries, const WordRun& keys) {
  if (queries.document != keys.document) return false;
  if ((queries.word & BitfieldMask::kCausalBit) != 0) {
    return (queries.word & keys.word & BitfieldMask::kAllModalities) != 0 && keys.first <= queries.last;
  }
  return (queries.word & BitfieldMask::kAllModalities) != 0 && queries.word == keys.word;
}

// Whether every query of `queries` attends every key of `keys`.
bool all_attend(const WordRun& queries, const WordRun& keys) {
  if (!any_attends(queries, keys)) return false;
  return (queries.word & BitfieldMask::kCausalBit) == 0 || keys.last <= queries.first;
}

std::vector<std::vector<WordRun>> runs_per_block(const BitfieldMask& mask, std::int64_t tile) {
  const std::int64_t tokens = mask.tokens();
  std::vector<std::vector<WordRun>> blocks(static_cast<std::size_t>((tokens + tile - 1) / tile));
  for (std::int64_t i = 0; i < tokens; ++i) {
    const auto at = static_cast<std::size_t>(i);
    std::vector<WordRun>& runs = blocks[static_cast<std::size_t>(i / tile)];
    if (!runs.empty() && runs.back().word == mask.words[at] && runs.back().document == mask.documents[at]) {
      runs.back().last = i;
    } else {
      runs.push_back(WordRun{i, i, mask.words[at], mask.documents[at]});
    }
  }
  return blocks;
}

bool any_pair(const std::vector<WordRun>& queries, const std::vector<WordRun>& keys) {
  return std::any_of(queries.begin(), queries.end(), [&](const WordRun& q) {
    return std::any_of(keys.begin(), keys.end(), [&](const WordRun& k) { return any_attends(q, k); });
  });
}

}  // namespace

RowBlockTiles tiles_per_row_block(const BitfieldMask& mask, std::int64_t tile) {
  const std::vector<std::vector<WordRun>> blocks = runs_per_block(mask, tile);
  RowBlockTiles tiles{std::vector<std::int64_t>(blocks.size(), 0), std::vector<std::int64_t>(blocks.size(), 0)};
  for (std::size_t row = 0; row < blocks.size(); ++row) {
    const std::vector<WordRun>& queries = blocks[row];
    for (const std::vector<WordRun>& keys : blocks) {
      if (!any_pair(queries, keys)) continue;
      ++tiles.nonempty[row];
      const bool full = std::all_of(queries.begin(), queries.end(), [&](const WordRun& q) {
        return std::all_of(keys.begin(), keys.end(), [&](const WordRun& k) { return all_attend(q, k); });
      });
      if (!full) ++tiles.partial[row];
    }
  }
  return tiles;
}

}  // namespace weft
