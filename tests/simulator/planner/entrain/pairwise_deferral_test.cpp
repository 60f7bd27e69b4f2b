#include "simulator/planner/entrain/pairwise_deferral.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <random>

#include <catch2/catch.hpp>

namespace weft::entrain {
namespace {

// The smallest |target - sum| over every subset, by enumeration.
double best_residual(const std::vector<double>& values, double target) {
  double best = std::numeric_limits<double>::infinity();
  for (unsigned mask = 0; mask < (1u << values.size()); ++mask) {
    double sum = 0.0;
    for (std::size_t i = 0; i < values.size(); ++i) {
      if (mask & (1u << i)) sum += values[i];
    }
    best = std::min(best, std::abs(target - sum));
  }
  return best;
}

double sum_at(const std::vector<double>& values, const std::vector<std::size_t>& chosen) {
  double sum = 0.0;
  for (const std::size_t i : chosen) sum += values[i];
  return sum;
}

TEST_CASE("the deferral set is the subset whose sum is closest to the target, as enumeration finds",
          "[entrain][deferral]") {
  std::mt19937 random(7);
  std::uniform_int_distribution<int> value(0, 40);
  for (int instance = 0; instance < 300; ++instance) {
    std::vector<double> values(1 + instance % 10);
    for (double& v : values) v = value(random);
    const double total = std::accumulate(values.begin(), values.end(), 0.0);
    const double target = std::uniform_real_distribution<double>(-5.0, total + 5.0)(random);
    const std::vector<std::size_t> chosen = closest_subset_sum(values, target, 1.0);
    REQUIRE(std::is_sorted(chosen.begin(), chosen.end()));
    REQUIRE(std::adjacent_find(chosen.begin(), chosen.end()) == chosen.end());
    CHECK(std::abs(target - sum_at(values, chosen)) == Approx(best_residual(values, target)).margin(1e-9));
  }
}

TEST_CASE("a coarse quantum keeps the deferral set within the rounding of the best", "[entrain][deferral]") {
  // Values of 1.0 .. 1.4 rounded to whole units: the table sees five 1s and takes four of them for
  // the target 3.6. The set is off the best by at most the rounding of its members, 0.5 each.
  const std::vector<double> values{1.4, 1.1, 1.3, 1.2, 1.0};
  const std::vector<std::size_t> chosen = closest_subset_sum(values, 3.6, 1.0);
  CHECK(chosen.size() == 4);
  CHECK(std::abs(3.6 - sum_at(values, chosen)) <=
        best_residual(values, 3.6) + 0.5 * static_cast<double>(values.size()));
}

TEST_CASE("the paper's Figure 4.10: the pairs and the bottleneck it shows", "[entrain][deferral]") {
  // Fig. 4.10b's post-deferral LLM work per pair (rows MB3, MB4, MB6 overloaded; columns MB1, MB2,
  // MB5 underloaded): V is the larger of each cell's two numbers. Each cell's two numbers add up to
  // the pair's work, which gives MB3 = 11 - MB1, MB4 = 9 - MB1, MB6 = 12 - MB1, MB2 = MB1 + 1 and
  // MB5 = MB1 + 3; with MB1 at 2 units, L is 9, 7 and 10 (any L above 6 gives the same answer).
  const std::vector<std::vector<double>> v{{6, 6, 8}, {6, 6, 6}, {6, 7, 9}};
  const std::vector<double> l{9, 7, 10};
  const BottleneckMatching matching = bottleneck_match(v, l, 0.0);
  // Every microbatch at 6 units (Fig. 4.8c): MB6 with MB1 (6), MB3 with MB2 (6), MB4 with MB5 (6).
  CHECK(matching.threshold == 6.0);
  CHECK(matching.partner == std::vector<int>{1, 2, 0});
  CHECK(matching.defers == std::vector<bool>{true, true, true});
}

// The least bottleneck over every pairing, each pair deferring or not: by enumeration.
double brute_force_bottleneck(const std::vector<std::vector<double>>& v, const std::vector<double>& l, double floor) {
  std::vector<int> partner(v.size());
  std::iota(partner.begin(), partner.end(), 0);
  double best = std::numeric_limits<double>::infinity();
  do {
    double worst = floor;
    for (std::size_t i = 0; i < v.size(); ++i)
      worst = std::max(worst, std::min(v[i][static_cast<std::size_t>(partner[i])], l[i]));
    best = std::min(best, worst);
  } while (std::next_permutation(partner.begin(), partner.end()));
  return best;
}

TEST_CASE("bottleneck matching finds the least threshold every pairing can reach", "[entrain][deferral]") {
  std::mt19937 random(11);
  std::uniform_int_distribution<int> cost(1, 30);
  for (int instance = 0; instance < 300; ++instance) {
    const std::size_t n = 1 + static_cast<std::size_t>(instance % 6);
    std::vector<double> l(n);
    std::vector<std::vector<double>> v(n, std::vector<double>(n));
    for (std::size_t i = 0; i < n; ++i) {
      l[i] = cost(random);
      for (double& value : v[i]) value = std::min<double>(cost(random), l[i]);  // deferring never hurts
    }
    const double floor = instance % 3 == 0 ? cost(random) : 0.0;
    const BottleneckMatching matching = bottleneck_match(v, l, floor);
    CHECK(matching.threshold == brute_force_bottleneck(v, l, floor));
    // The pairing it returns reaches the threshold, and is a permutation.
    std::vector<int> columns = matching.partner;
    std::sort(columns.begin(), columns.end());
    for (std::size_t i = 0; i < n; ++i) {
      CHECK(columns[i] == static_cast<int>(i));
      const double reached = matching.defers[i] ? v[i][static_cast<std::size_t>(matching.partner[i])] : l[i];
      CHECK(reached <= matching.threshold);
    }
  }
}

TEST_CASE("pairwise deferral moves LLM work from each overloaded microbatch to the one after it",
          "[entrain][deferral]") {
  // Four microbatches; sample i's LLM work is llm[i].
  const std::vector<double> llm{8, 1, 1, 2, 3, 1, 1, 1, 1};
  const std::vector<SampleSet> microbatches{{0, 1}, {2, 5}, {3, 4, 6}, {7, 8}};
  // Loads 9, 2, 6, 2. Overloaded: MB0 (9), MB2 (6); underloaded: MB1 (2), MB3 (2) (ties keep order).
  const DeferredMicrobatches out = pairwise_deferral(microbatches, llm, 1024);
  REQUIRE(out.encoder.size() == 4);
  REQUIRE(out.llm.size() == 4);
  // MB0 can move 1 (sample 1) or 8 or 9: the best move is 1, leaving 8 against 3. MB2 could move 2
  // (sample 3) for 4 and 4, but the bottleneck is MB0's 8.
  CHECK(out.threshold == 8.0);
  CHECK(out.encoder[0] == SampleSet{0, 1});
  CHECK(out.llm[0] == SampleSet{0});
  CHECK(out.llm[1].back() == 1);
  CHECK(out.encoder[2] == SampleSet{3, 4, 6});
  // MB2 (6) needs no deferral under the bottleneck of 8: it runs alone, as the paper's non-critical
  // microbatches do.
  CHECK(out.llm[2] == SampleSet{3, 4, 6});
  CHECK(out.deferred == 1);
  // Every sample's LLM work runs once, and no later than its encoder's microbatch's partner.
  std::vector<std::size_t> all;
  for (const SampleSet& set : out.llm) all.insert(all.end(), set.begin(), set.end());
  std::sort(all.begin(), all.end());
  CHECK(all == std::vector<std::size_t>{0, 1, 2, 3, 4, 5, 6, 7, 8});
}

TEST_CASE("with an odd count the middle microbatch runs last, alone, and bounds the threshold", "[entrain][deferral]") {
  const std::vector<double> llm{6, 6, 5, 1, 1};
  const std::vector<SampleSet> microbatches{{0, 3}, {1}, {2, 4}};
  // Loads 7, 6, 6: MB0 overloaded, MB2 underloaded, MB1 in the middle (6).
  const DeferredMicrobatches out = pairwise_deferral(microbatches, llm, 1024);
  REQUIRE(out.encoder.size() == 3);
  CHECK(out.encoder[2] == SampleSet{1});
  CHECK(out.llm[2] == SampleSet{1});
  CHECK(out.threshold == 7.0);  // moving sample 3 gives 6 and 7: no better than 7 alone
}

}  // namespace
}  // namespace weft::entrain
