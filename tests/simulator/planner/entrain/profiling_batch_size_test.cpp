#include "simulator/planner/entrain/profiling_batch_size.hpp"

#include <cmath>
#include <limits>
#include <numeric>
#include <random>

#include <catch2/catch.hpp>

#include "simulator/core/input_error.hpp"

namespace weft::entrain {
namespace {

TEST_CASE("k validation trials from the binomial bound: 59 at 95% confidence and 5% error", "[entrain][profiling]") {
  CHECK(validation_trials(0.05, 0.05) == 59);  // §4.7.3
  CHECK(validation_trials(0.01, 0.05) == 90);  // ln 0.01 / ln 0.95 = 89.8
  CHECK_THROWS_AS(validation_trials(0.0, 0.05), InputError);
  CHECK_THROWS_AS(validation_trials(0.05, 1.0), InputError);
}

// The least sum of |a_i - q_i| over allocations of `units` with every a_i >= 1, by enumeration.
double best_deviation(int units, const std::vector<double>& quota) {
  double best = std::numeric_limits<double>::infinity();
  std::vector<int> a(quota.size(), 1);
  while (true) {
    if (std::accumulate(a.begin(), a.end(), 0) == units) {
      double deviation = 0.0;
      for (std::size_t i = 0; i < a.size(); ++i) deviation += std::abs(a[i] - quota[i]);
      best = std::min(best, deviation);
    }
    std::size_t i = 0;
    while (i < a.size() && ++a[i] > units) a[i++] = 1;
    if (i == a.size()) return best;
  }
}

TEST_CASE("proportional allocation rounds to the nearest feasible counts", "[entrain][profiling]") {
  // Table 4.2: the dataset's ratio 1.27:1 over 16 GPUs of TP 2 (8 units) is 8:8 GPUs.
  CHECK(proportional_allocation(8, std::vector<double>{1.27, 1.0}) == std::vector<int>{4, 4});
  CHECK(proportional_allocation(8, std::vector<double>{10.0, 6.0}) == std::vector<int>{5, 3});
  CHECK(proportional_allocation(4, std::vector<double>{1.0, 0.0, 0.0}) == std::vector<int>{2, 1, 1});
  CHECK_THROWS_AS(proportional_allocation(2, std::vector<double>{1.0, 1.0, 1.0}), InputError);
  std::mt19937 random(5);
  std::uniform_real_distribution<double> share(0.0, 1.0);
  for (int instance = 0; instance < 300; ++instance) {
    const int units = 3 + instance % 9;
    std::vector<double> proportions(2 + static_cast<std::size_t>(instance % 2));
    for (double& p : proportions) p = share(random);
    const std::vector<int> out = proportional_allocation(units, proportions);
    REQUIRE(std::accumulate(out.begin(), out.end(), 0) == units);
    const double total = std::accumulate(proportions.begin(), proportions.end(), 0.0);
    std::vector<double> quota;
    double deviation = 0.0;
    for (std::size_t i = 0; i < out.size(); ++i) {
      CHECK(out[i] >= 1);
      quota.push_back(units * proportions[i] / total);
      deviation += std::abs(out[i] - quota[i]);
    }
    CHECK(deviation == Approx(best_deviation(units, quota)).margin(1e-9));
  }
}

TEST_CASE("Algorithm 2 doubles the batch until k trials agree with the reference", "[entrain][profiling]") {
  // Below 64 samples the draws alternate between 7:3 and 3:7 of 10 units; from 64 on they give 1:1.
  int calls = 0;
  auto proportions = [&](std::int64_t n) {
    ++calls;
    if (n >= 64) return std::vector<double>{0.52, 0.48};
    return calls % 2 == 0 ? std::vector<double>{0.7, 0.3} : std::vector<double>{0.3, 0.7};
  };
  const ProfilingBatchSize out = minimum_profiling_batch(proportions, 10, 0.05, 0.05, 1, 4096);
  CHECK(out.batch == 64);
  CHECK(out.trials == 59);
  REQUIRE(out.rounds.size() == 7);  // 1, 2, 4, 8, 16, 32, 64
  for (std::size_t r = 0; r + 1 < out.rounds.size(); ++r) {
    CHECK_FALSE(out.rounds[r].stable);
    CHECK(out.rounds[r].trials == 1);  // the first validation batch already differs
    CHECK(out.rounds[r].allocations.size() == 2);
  }
  CHECK(out.rounds.back().stable);
  CHECK(out.rounds.back().trials == 59);
  CHECK(out.rounds.back().reference == std::vector<int>{5, 5});
  CHECK(calls == 6 * 2 + 60);

  calls = 0;
  CHECK_THROWS_AS(minimum_profiling_batch(proportions, 10, 0.05, 0.05, 1, 32), InputError);
  calls = 0;
  CHECK(allocations_seen(proportions, 10, 4, 59) == std::vector<std::vector<int>>{{3, 7}, {7, 3}});
  CHECK(allocations_seen(proportions, 10, 256, 59) == std::vector<std::vector<int>>{{5, 5}});
}

}  // namespace
}  // namespace weft::entrain
