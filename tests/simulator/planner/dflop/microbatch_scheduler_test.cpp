#include "simulator/planner/dflop/microbatch_scheduler.hpp"

#include <algorithm>
#include <random>

#include <catch2/catch.hpp>

namespace weft::dflop {
namespace {

using Buckets = std::vector<std::vector<std::size_t>>;

// The least C_max over every assignment of the samples to `m` buckets, by enumeration.
double brute_force_c_max(const std::vector<double>& encoder, const std::vector<double>& llm, int m) {
  const std::size_t n = encoder.size();
  std::vector<int> choice(n, 0);
  double best = 1e300;
  while (true) {
    std::vector<double> e(static_cast<std::size_t>(m), 0.0);
    std::vector<double> l(static_cast<std::size_t>(m), 0.0);
    for (std::size_t i = 0; i < n; ++i) {
      e[static_cast<std::size_t>(choice[i])] += encoder[i];
      l[static_cast<std::size_t>(choice[i])] += llm[i];
    }
    best = std::min(best, std::max(*std::max_element(e.begin(), e.end()), *std::max_element(l.begin(), l.end())));
    std::size_t k = 0;
    while (k < n && ++choice[k] == m) choice[k++] = 0;
    if (k == n) break;
  }
  return best;
}

// Encoder and LLM durations of `samples` samples, uniform in [0.1, 1), drawn from `random`.
struct Durations {
  std::vector<double> encoder;
  std::vector<double> llm;
};
Durations random_durations(std::mt19937& random, std::size_t samples) {
  std::uniform_real_distribution<double> duration(0.1, 1.0);
  Durations out{std::vector<double>(samples), std::vector<double>(samples)};
  for (std::size_t i = 0; i < samples; ++i) {
    out.encoder[i] = duration(random);
    out.llm[i] = duration(random);
  }
  return out;
}

void check_partition(const Buckets& buckets, std::size_t samples) {
  std::vector<std::size_t> all;
  for (const auto& bucket : buckets) all.insert(all.end(), bucket.begin(), bucket.end());
  std::sort(all.begin(), all.end());
  REQUIRE(all.size() == samples);
  for (std::size_t i = 0; i < samples; ++i) CHECK(all[i] == i);
}

TEST_CASE("LPT takes samples longest first, each to the bucket of least load", "[dflop]") {
  // Durations max(E, L): 9, 7, 6, 5, 4, 3 for samples 0..5.
  const std::vector<double> encoder{9, 1, 6, 5, 0, 3};
  const std::vector<double> llm{2, 7, 1, 1, 4, 0};
  const BucketAssignment split = lpt_buckets(encoder, llm, 2);
  // 9 -> b0 (E9 L2); 7 -> b1 (E1 L7); 6 -> b1 (max 7 < 9): E7 L8; 5 -> b1 (8 < 9): E12 L9;
  // 4 -> b0 (9 < 12): E9 L6; 3 -> b0 (9 < 12): E12 L6.
  CHECK(split.buckets == Buckets{{0, 4, 5}, {1, 2, 3}});
  CHECK(split.c_max == 12.0);
  // max(sum E / 2 = 12, sum L / 2 = 7.5, 9, 7)
  CHECK(split.lower_bound == 12.0);
  CHECK(split.method == BucketMethod::lpt);
}

TEST_CASE("the scheduler's ILP finds the least C_max that enumeration finds", "[dflop]") {
  std::mt19937 random(7);
  for (int trial = 0; trial < 6; ++trial) {
    const auto [encoder, llm] = random_durations(random, 7);
    // A time limit, or a node budget and no time limit at all.
    for (const SearchLimits limits : {SearchLimits{.seconds = 30.0}, SearchLimits{.nodes = 100000}}) {
      const BucketAssignment split = schedule_buckets(encoder, llm, 3, limits);
      INFO("trial " << trial << ", " << limits.seconds << " s, " << limits.nodes << " nodes");
      check_partition(split.buckets, 7);
      CHECK(split.optimal);
      CHECK(split.c_max == Approx(brute_force_c_max(encoder, llm, 3)).epsilon(1e-6));
      CHECK(split.c_max == Approx(bucket_c_max(encoder, llm, split.buckets)));
      CHECK(split.c_max <= lpt_buckets(encoder, llm, 3).c_max + 1e-12);
      CHECK(split.lower_bound <= split.c_max + 1e-12);
    }
  }
}

TEST_CASE("out of time or of nodes, the scheduler falls back to LPT's split", "[dflop]") {
  std::mt19937 random(11);
  const auto [encoder, llm] = random_durations(random, 400);
  const BucketAssignment lpt = lpt_buckets(encoder, llm, 40);
  // Random durations: LPT's split misses the bound, which no split meets exactly, so nothing is
  // proven within one node.
  REQUIRE(lpt.c_max > lpt.lower_bound);
  for (const SearchLimits limits : {SearchLimits{.seconds = 0.001}, SearchLimits{.nodes = 1}}) {
    INFO(limits.seconds << " s, " << limits.nodes << " nodes");
    const BucketAssignment split = schedule_buckets(encoder, llm, 40, limits);
    CHECK(split.method == BucketMethod::lpt);
    CHECK_FALSE(split.optimal);
    CHECK(split.buckets == lpt.buckets);
  }
}

TEST_CASE("under a node budget the scheduler's split is the same on every solve", "[dflop]") {
  // Nothing in a node budget depends on the clock: twelve samples in four buckets, searched for
  // 50 nodes, give one split however long each node took.
  std::mt19937 random(5);
  const auto [encoder, llm] = random_durations(random, 12);
  const BucketAssignment first = schedule_buckets(encoder, llm, 4, {.nodes = 50});
  check_partition(first.buckets, 12);
  CHECK(first.c_max <= lpt_buckets(encoder, llm, 4).c_max + 1e-12);
  for (int again = 0; again < 3; ++again) {
    const BucketAssignment split = schedule_buckets(encoder, llm, 4, {.nodes = 50});
    CHECK(split.buckets == first.buckets);
    CHECK(split.method == first.method);
  }
}

TEST_CASE("when LPT meets the lower bound no search is needed", "[dflop]") {
  // One long sample sets the bound: LPT gives it a bucket of its own.
  const std::vector<double> encoder{10, 1, 1, 1};
  const std::vector<double> llm{0, 1, 1, 1};
  const BucketAssignment split = schedule_buckets(encoder, llm, 2, {.seconds = 1.0});
  CHECK(split.optimal);
  CHECK(split.c_max == 10.0);
  CHECK(split.buckets == Buckets{{0}, {1, 2, 3}});
}

TEST_CASE("a random split deals equal counts and depends only on its seed", "[dflop]") {
  const Buckets split = random_buckets(10, 4, 5);
  check_partition(split, 10);
  for (std::size_t j = 0; j < 4; ++j) {
    CHECK(split[j].size() == (j < 2 ? 3u : 2u));
    CHECK(std::is_sorted(split[j].begin(), split[j].end()));
  }
  const std::vector<double> encoder(10, 1.0), llm(10, 2.0);
  CHECK(bucket_c_max(encoder, llm, split) == 6.0);  // three samples of LLM duration 2
  CHECK(random_buckets(10, 4, 5) == split);
  CHECK(random_buckets(10, 4, 6) != split);
}

}  // namespace
}  // namespace weft::dflop
