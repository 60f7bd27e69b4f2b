#include "simulator/resilience/checkpoint_interval.hpp"

#include <catch2/catch.hpp>

#include <cmath>

#include "simulator/resilience/goodput_study.hpp"

namespace weft {
namespace {

TEST_CASE("Young's and Daly's intervals, by hand", "[resilience]") {
  // δ = 5 min, M = 24 h: Young sqrt(2 × 300 × 86,400) = 7,200 s. Daly: δ / 2M = 1/576, so
  // 7,200 (1 + (1/3)(1/24) + (1/9)(1/576)) − 300 = 7,200 × 1.0140818 − 300 = 7,001.39 s.
  CHECK(young_interval_s(300.0, 86400.0) == Approx(7200.0).epsilon(1e-12));
  CHECK(daly_interval_s(300.0, 86400.0) == Approx(7001.389).epsilon(1e-6));
  // A checkpoint as long as twice the MTBF: Daly's interval is the MTBF itself.
  CHECK(daly_interval_s(200.0, 100.0) == 100.0);
}

TEST_CASE("Daly's expected wall time is least near his interval", "[resilience]") {
  // Over a fine scan of intervals, the least expected wall time lies within 2% of Daly's estimate.
  const double checkpoint = 60.0;
  const double mtbf = 4.0 * 3600.0;
  double best_interval = 0.0;
  double best_wall = INFINITY;
  for (double interval = 60.0; interval < 20'000.0; interval += 1.0) {
    const double wall = daly_expected_wall_s(1e6, interval, checkpoint, 600.0, mtbf);
    if (wall < best_wall) {
      best_wall = wall;
      best_interval = interval;
    }
  }
  CHECK(daly_interval_s(checkpoint, mtbf) == Approx(best_interval).epsilon(0.02));
}

TEST_CASE("the interval search finds an interval as good as Daly's optimum", "[resilience]") {
  // Daly's setting (failures that take no node out), where his formula is exact: the searched
  // interval's expected wall time is within 1% of the least one.
  const double mtbf = 3600.0;
  RunSetup setup;
  setup.iteration_s = 10.0;
  setup.tokens_per_iteration = 1000.0;
  setup.job_nodes = 4;
  setup.job_gpus = 32;
  setup.failures.causes.push_back({.name = "software",
                                   .rate_per_node_s = 1.0 / (mtbf * 4),
                                   .blast_radius = BlastRadius::none,
                                   .repair_s = 0.0,
                                   .repair = RepairDistribution::fixed});
  setup.recovery.checkpoint.bytes = 30.0;  // 30 s at 1 B/s
  setup.recovery.checkpoint.write_bytes_per_s = 1.0;
  setup.recovery.checkpoint.read_bytes_per_s = 1e300;
  setup.recovery.restart_s = 300.0;
  setup.horizon_s = 200 * 3600.0;
  const IntervalSearch search = search_checkpoint_interval(setup, 1, 200);
  REQUIRE(search.trials.size() >= 20);
  const auto wall = [&](double interval) { return daly_expected_wall_s(1e6, interval, 30.0, 300.0, mtbf); };
  double least = INFINITY;
  for (double interval = 10.0; interval < 20'000.0; interval += 10.0) least = std::min(least, wall(interval));
  INFO("searched " << search.best_interval_s << " s, Daly " << daly_interval_s(30.0, mtbf) << " s");
  CHECK(wall(search.best_interval_s) <= least * 1.01);
}

}  // namespace
}  // namespace weft
