#include "simulator/workload/context_parallel/token_distribution.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <random>

namespace weft {
namespace {

std::vector<std::int64_t> loads(const std::vector<int>& rank_of, const std::vector<std::int64_t>& work, int ranks) {
  std::vector<std::int64_t> load(static_cast<std::size_t>(ranks), 0);
  for (std::size_t i = 0; i < work.size(); ++i) load[static_cast<std::size_t>(rank_of[i])] += work[i];
  return load;
}

std::int64_t makespan(const std::vector<int>& rank_of, const std::vector<std::int64_t>& work, int ranks) {
  const std::vector<std::int64_t> load = loads(rank_of, work, ranks);
  return *std::max_element(load.begin(), load.end());
}

// The best makespan over every assignment.
std::int64_t optimal_makespan(const std::vector<std::int64_t>& work, int ranks) {
  std::vector<int> rank_of(work.size(), 0);
  std::int64_t best = INT64_MAX;
  while (true) {
    best = std::min(best, makespan(rank_of, work, ranks));
    std::size_t i = 0;
    while (i < rank_of.size() && ++rank_of[i] == ranks) rank_of[i++] = 0;
    if (i == rank_of.size()) return best;
  }
}

TEST_CASE("ring deals contiguous blocks, zigzag chunk i and 2G-1-i", "[context_parallel]") {
  std::mt19937_64 random(1);
  const std::vector<std::int64_t> work(16, 1);
  CHECK(assign_blocks(TokenDistribution::ring, work, 4, random) ==
        std::vector<int>{0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3});
  CHECK(assign_blocks(TokenDistribution::zigzag, work, 4, random) ==
        std::vector<int>{0, 0, 1, 1, 2, 2, 3, 3, 3, 3, 2, 2, 1, 1, 0, 0});
  // Ten blocks over four: the first two of them one block more, as numpy's array_split.
  CHECK(assign_blocks(TokenDistribution::ring, std::vector<std::int64_t>(10, 1), 4, random) ==
        std::vector<int>{0, 0, 0, 1, 1, 1, 2, 2, 3, 3});
}

TEST_CASE("zigzag balances a causal mask, ring does not", "[context_parallel]") {
  std::mt19937_64 random(1);
  std::vector<std::int64_t> causal(32);
  for (std::size_t b = 0; b < causal.size(); ++b) causal[b] = static_cast<std::int64_t>(b) + 1;  // row b: b + 1 tiles
  const std::vector<std::int64_t> zigzag =
      loads(assign_blocks(TokenDistribution::zigzag, causal, 4, random), causal, 4);
  CHECK(zigzag == std::vector<std::int64_t>{132, 132, 132, 132});  // 528 tiles / 4
  // Ring: the last rank holds rows 25..32: 8 (25 + 32) / 2 = 228.
  CHECK(makespan(assign_blocks(TokenDistribution::ring, causal, 4, random), causal, 4) == 228);
}

TEST_CASE("random hashes blocks: round robin from a random rank for a power of two", "[context_parallel]") {
  const std::vector<std::int64_t> work(64, 1);
  for (std::uint64_t seed = 0; seed < 5; ++seed) {
    std::mt19937_64 random(seed);
    const std::vector<int> rank_of = assign_blocks(TokenDistribution::random, work, 8, random);
    CHECK(loads(rank_of, work, 8) == std::vector<std::int64_t>(8, 8));
    for (std::size_t i = 8; i < rank_of.size(); ++i) CHECK(rank_of[i] == rank_of[i - 8]);
  }
  std::mt19937_64 a(9);
  std::mt19937_64 b(9);
  const std::vector<int> six = assign_blocks(TokenDistribution::random, work, 6, a);
  CHECK(six == assign_blocks(TokenDistribution::random, work, 6, b));
  CHECK(std::all_of(six.begin(), six.end(), [](int rank) { return rank >= 0 && rank < 6; }));
}

TEST_CASE("lpt: Graham's example, and within 4/3 - 1/(3G) of the best assignment", "[context_parallel]") {
  std::mt19937_64 random(1);
  // 5 and 4 first, then 3 three times to the least loaded: 5+3 and 4+3+3, against the best 5+4 | 3+3+3.
  const std::vector<std::int64_t> graham{3, 5, 3, 4, 3};
  const std::vector<int> rank_of = assign_blocks(TokenDistribution::lpt, graham, 2, random);
  CHECK(rank_of == std::vector<int>{1, 0, 0, 1, 1});
  CHECK(makespan(rank_of, graham, 2) == 10);
  CHECK(optimal_makespan(graham, 2) == 9);
  std::mt19937_64 draws(5);
  for (int trial = 0; trial < 30; ++trial) {
    const int ranks = 2 + trial % 3;
    std::vector<std::int64_t> work(8);
    for (std::int64_t& w : work) w = 1 + static_cast<std::int64_t>(draws() % 40);
    const double lpt =
        static_cast<double>(makespan(assign_blocks(TokenDistribution::lpt, work, ranks, random), work, ranks));
    const double best = static_cast<double>(optimal_makespan(work, ranks));
    CHECK(lpt >= best);
    CHECK(lpt <= (4.0 / 3.0 - 1.0 / (3.0 * ranks)) * best + 1e-9);
  }
}

TEST_CASE("a rank's share: its blocks' tokens and tiles, the last block partial", "[context_parallel]") {
  const std::vector<int> rank_of{0, 1, 1, 0, 2};
  const std::vector<std::int64_t> tiles{1, 2, 3, 4, 5};
  const std::vector<std::int64_t> partial{1, 0, 2, 1, 3};
  const std::vector<RankShare> shares = rank_shares(rank_of, tiles, partial, 4 * 128 + 50, 128, 3);
  REQUIRE(shares.size() == 3);
  CHECK(shares[0].tokens == 256);
  CHECK(shares[0].tiles == 5);
  CHECK(shares[0].partial_tiles == 2);
  CHECK(shares[1].tokens == 256);
  CHECK(shares[1].tiles == 5);
  CHECK(shares[1].partial_tiles == 2);
  CHECK(shares[2].tokens == 50);
  CHECK(shares[2].tiles == 5);
  CHECK(shares[2].partial_tiles == 3);
  // Work in full tiles: 2 full and 3 partial at 1.37 each (FlexAttention on an H200).
  CHECK(shares[2].tile_work() == Approx(2 + 3 * 1.37));
}

}  // namespace
}  // namespace weft
