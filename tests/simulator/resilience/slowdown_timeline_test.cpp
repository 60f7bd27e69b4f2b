#include "simulator/resilience/slowdown_timeline.hpp"

#include <catch2/catch.hpp>

#include <cmath>

namespace weft {
namespace {

FailureModel one_slowdown(double rate_per_node_s, double duration_s) {
  FailureModel model;
  model.slowdowns.push_back(
      {.name = "throttled", .rate_per_node_s = rate_per_node_s, .duration_s = duration_s, .speed = 0.5});
  return model;
}

TEST_CASE("a slowdown sets the job's rate for its duration, then gives it back", "[resilience]") {
  // Rare slowdowns of 1 s: the second starts a billion seconds later on average, never within the
  // first's second in practice.
  const FailureModel failures = one_slowdown(1e-9, 1.0);
  SlowdownTimeline timeline(failures, {{0.7}}, 1, 3);
  CHECK(timeline.rate() == 1.0);
  const double start = timeline.next_event();
  REQUIRE(std::isfinite(start));
  timeline.handle_next_event();
  CHECK(timeline.rate() == 0.7);
  CHECK(timeline.next_event() == start + 1.0);
  timeline.handle_next_event();
  CHECK(timeline.rate() == 1.0);
  CHECK(timeline.next_event() > start + 1.0);
  // The same seed draws the same times.
  CHECK(SlowdownTimeline(failures, {{0.7}}, 1, 3).next_event() == start);
}

TEST_CASE("slowdowns on top of each other slow the job to the slowest of them", "[resilience]") {
  // Long slowdowns, frequent: several under way at once, each on one of two stages.
  const FailureModel failures = one_slowdown(1.0, 1e6);
  SlowdownTimeline timeline(failures, {{0.6, 0.9}}, 1, 5);
  bool slowest_seen = false;
  for (int i = 0; i < 50; ++i) {
    const double before = timeline.rate();
    timeline.handle_next_event();  // every event a start: none ends within 50 of them
    CHECK(timeline.rate() <= before);
    CHECK((timeline.rate() == 0.6 || timeline.rate() == 0.9));
    slowest_seen = slowest_seen || timeline.rate() == 0.6;
  }
  CHECK(slowest_seen);
}

TEST_CASE("no slowdown cause, no slowdown", "[resilience]") {
  const FailureModel failures;
  SlowdownTimeline timeline(failures, {}, 16, 1);
  CHECK(std::isinf(timeline.next_event()));
  CHECK(timeline.rate() == 1.0);
}

}  // namespace
}  // namespace weft
