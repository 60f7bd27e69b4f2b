#include "simulator/workload/context_parallel/token_distribution.hpp"

#include <algorithm>
#include <functional>
#include <numeric>
#include <queue>
#include <utility>

namespace weft {
namespace {

// Chunk of each of `blocks` blocks when split into `chunks` contiguous chunks whose sizes differ by
// at most one, the larger first (numpy's array_split).
std::vector<int> contiguous_chunks(std::size_t blocks, int chunks) {
  std::vector<int> chunk_of(blocks);
  const std::size_t base = blocks / static_cast<std::size_t>(chunks);
  const std::size_t larger = blocks % static_cast<std::size_t>(chunks);
  std::size_t block = 0;
  for (int chunk = 0; chunk < chunks; ++chunk) {
    const std::size_t size = base + (static_cast<std::size_t>(chunk) < larger ? 1 : 0);
    for (std::size_t i = 0; i < size; ++i) chunk_of[block++] = chunk;
  }
  return chunk_of;
}

std::vector<int> zigzag(std::size_t blocks, int ranks) {
  std::vector<int> rank_of = contiguous_chunks(blocks, 2 * ranks);
  for (int& chunk : rank_of) chunk = chunk < ranks ? chunk : 2 * ranks - 1 - chunk;
  return rank_of;
}

std::vector<int> hashed(std::size_t blocks, int ranks, std::mt19937_64& random) {
  constexpr std::uint64_t kModulus = std::uint64_t{1} << 31;
  const auto g = static_cast<std::uint64_t>(ranks);
  std::uint64_t a = 0;
  do {
    a = 1 + random() % (kModulus - 1);
  } while (std::gcd(a, g) != 1);
  const std::uint64_t b = random() % kModulus;
  const std::uint64_t offset = random() % kModulus;
  std::vector<int> rank_of(blocks);
  for (std::size_t i = 0; i < blocks; ++i) {
    const std::uint64_t hash = (a * ((i + offset) % kModulus) + b) % kModulus;
    rank_of[i] = static_cast<int>(hash % g);
  }
  return rank_of;
}

std::vector<int> longest_first(std::span<const std::int64_t> work, int ranks) {
  std::vector<std::size_t> order(work.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](std::size_t x, std::size_t y) { return work[x] > work[y]; });
  using Load = std::pair<std::int64_t, int>;  // (work so far, rank): the least, then the lower rank
  std::priority_queue<Load, std::vector<Load>, std::greater<>> loads;
  for (int rank = 0; rank < ranks; ++rank) loads.emplace(0, rank);
  std::vector<int> rank_of(work.size());
  for (const std::size_t block : order) {
    const auto [load, rank] = loads.top();
    loads.pop();
    rank_of[block] = rank;
    loads.emplace(load + work[block], rank);
  }
  return rank_of;
}

}  // namespace

std::vector<int> assign_blocks(TokenDistribution distribution, std::span<const std::int64_t> block_work, int ranks,
                               std::mt19937_64& random) {
  switch (distribution) {
    case TokenDistribution::ring:
      return contiguous_chunks(block_work.size(), ranks);
    case TokenDistribution::zigzag:
      return zigzag(block_work.size(), ranks);
    case TokenDistribution::random:
      return hashed(block_work.size(), ranks, random);
    case TokenDistribution::lpt:
      return longest_first(block_work, ranks);
  }
  return {};
}

std::vector<RankShare> rank_shares(std::span<const int> rank_of_block, std::span<const std::int64_t> block_tiles,
                                   std::span<const std::int64_t> block_partial, std::int64_t tokens, std::int64_t tile,
                                   int ranks) {
  std::vector<RankShare> shares(static_cast<std::size_t>(ranks));
  for (std::size_t block = 0; block < rank_of_block.size(); ++block) {
    RankShare& share = shares[static_cast<std::size_t>(rank_of_block[block])];
    const std::int64_t first = static_cast<std::int64_t>(block) * tile;
    share.tokens += std::min(tile, tokens - first);
    share.tiles += block_tiles[block];
    share.partial_tiles += block_partial[block];
  }
  return shares;
}

}  // namespace weft
