#include "simulator/planner/entrain/pipeline_balancing.hpp"

#include <algorithm>
#include <limits>
#include <numeric>
#include <random>

#include <catch2/catch.hpp>

#include "simulator/core/input_error.hpp"

namespace weft::entrain {
namespace {

// The least bottleneck over every cut of `costs` into `stages` non-empty runs, by enumeration.
double brute_force(const std::vector<double>& costs, int stages) {
  const auto n = static_cast<int>(costs.size());
  double best = std::numeric_limits<double>::infinity();
  // Each subset of the n - 1 gaps with stages - 1 members is a cut.
  for (unsigned mask = 0; mask < (1u << (n - 1)); ++mask) {
    if (__builtin_popcount(mask) != stages - 1) continue;
    double worst = 0.0;
    double run = 0.0;
    for (int l = 0; l < n; ++l) {
      run += costs[static_cast<std::size_t>(l)];
      if (l == n - 1 || (mask & (1u << l))) {
        worst = std::max(worst, run);
        run = 0.0;
      }
    }
    best = std::min(best, worst);
  }
  return best;
}

TEST_CASE("Eq. 4.1's partition has the least bottleneck, as enumeration finds", "[entrain][balancing]") {
  std::mt19937 random(2);
  std::uniform_real_distribution<double> cost(0.1, 5.0);
  for (int instance = 0; instance < 300; ++instance) {
    std::vector<double> costs(1 + static_cast<std::size_t>(instance % 12));
    for (double& c : costs) c = cost(random);
    const int stages = 1 + instance % static_cast<int>(costs.size());
    const LayerPartition out = min_max_partition(costs, stages);
    REQUIRE(out.layers.size() == static_cast<std::size_t>(stages));
    CHECK(std::accumulate(out.layers.begin(), out.layers.end(), 0) == static_cast<int>(costs.size()));
    CHECK(*std::min_element(out.layers.begin(), out.layers.end()) >= 1);
    CHECK(std::accumulate(out.stage_cost.begin(), out.stage_cost.end(), 0.0) ==
          Approx(std::accumulate(costs.begin(), costs.end(), 0.0)));
    CHECK(out.bottleneck == Approx(brute_force(costs, stages)));
  }
}

TEST_CASE("Eq. 4.1 by hand, and its bad inputs", "[entrain][balancing]") {
  const LayerPartition out = min_max_partition(std::vector<double>{3, 1, 1, 1, 2, 2}, 3);
  CHECK(out.layers == std::vector<int>{1, 3, 2});  // 3 | 1 1 1 | 2 2: bottleneck 4
  CHECK(out.bottleneck == 4.0);
  CHECK_THROWS_AS(min_max_partition(std::vector<double>{1, 2}, 3), InputError);
  CHECK_THROWS_AS(min_max_partition(std::vector<double>{1, 2}, 0), InputError);
}

TEST_CASE("Eq. 4.2: every stage once and K - 1 times the slowest", "[entrain][balancing]") {
  LayerPartition encoder;
  encoder.stage_cost = {1.0, 2.0};
  encoder.bottleneck = 2.0;
  LayerPartition llm;
  llm.stage_cost = {3.0};
  llm.bottleneck = 3.0;
  const std::vector<LayerPartition> modules{encoder, llm};
  CHECK(analytical_iteration(modules, 4) == 6.0 + 3 * 3.0);
  CHECK(analytical_iteration(modules, 1) == 6.0);
}

}  // namespace
}  // namespace weft::entrain
