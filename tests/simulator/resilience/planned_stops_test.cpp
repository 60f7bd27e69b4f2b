#include "simulator/resilience/planned_stops.hpp"

#include <catch2/catch.hpp>

#include <cmath>

namespace weft {
namespace {

TEST_CASE("planned stops come as a Poisson process over the job's nodes, each cause in proportion to its rate",
          "[resilience]") {
  FailureModel model;
  // Per node: one stop every 400 days of a 1 h cause and every 400/3 days of a 2 h one, so a job
  // of 4 nodes stops every 25 days on average, three times in four for 2 h.
  const double day = 86400.0;
  model.planned.push_back({.name = "firmware", .rate_per_node_s = 1.0 / (400 * day), .downtime_s = 3600.0});
  model.planned.push_back({.name = "dataset", .rate_per_node_s = 3.0 / (400 * day), .downtime_s = 7200.0});
  PlannedStops stops(model, 4, 7);
  constexpr int kStops = 40'000;
  int long_ones = 0;
  double last = 0.0;
  for (int i = 0; i < kStops; ++i) {
    last = stops.next_event();
    long_ones += stops.take_next() == 7200.0 ? 1 : 0;
  }
  // The mean gap of 40,000 exponential gaps is within 1.5% of its expectation (5 standard errors
  // of 0.5%); the share of 2 h stops within 0.011 of 3/4 (5 standard errors of 0.0022).
  CHECK(last / kStops == Approx(25 * day).epsilon(0.015));
  CHECK(std::abs(static_cast<double>(long_ones) / kStops - 0.75) < 0.011);
  SECTION("the same seed gives the same stops, another seed others") {
    const PlannedStops same(model, 4, 7);
    const PlannedStops other(model, 4, 8);
    const PlannedStops first(model, 4, 7);
    CHECK(same.next_event() == first.next_event());
    CHECK(other.next_event() != first.next_event());
  }
}

TEST_CASE("a job without planned causes never stops as planned", "[resilience]") {
  const PlannedStops stops(FailureModel{}, 2048, 1);
  CHECK(std::isinf(stops.next_event()));
}

}  // namespace
}  // namespace weft
