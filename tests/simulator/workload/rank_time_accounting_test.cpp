#include <catch2/catch.hpp>

#include <algorithm>
#include <memory>
#include <random>

#include "simulator/workload/rank_time_accounting.hpp"

namespace weft {
namespace {

constexpr std::uint8_t kCompute = 0;
constexpr std::uint8_t kTp = 1 + static_cast<std::uint8_t>(CommGroupKind::tp);
constexpr std::uint8_t kPp = 1 + static_cast<std::uint8_t>(CommGroupKind::pp);

struct Split {
  double compute_s = 0.0;
  std::array<double, kCommGroupKindCount> exposed_s{};
};

// The split by the definition: every event of every run sorted by time, then each interval in
// between given to compute if any compute op runs, else shared evenly by the communication ops.
Split reference_split(const std::vector<ActivityRun>& runs,
                      const std::vector<std::vector<ActivityProfile::Event>>& events_of_run) {
  std::vector<ActivityProfile::Event> events;
  for (std::size_t r = 0; r < runs.size(); ++r) {
    for (ActivityProfile::Event event : events_of_run[r]) {
      event.time += runs[r].origin;
      events.push_back(event);
    }
  }
  std::sort(events.begin(), events.end(), [](const auto& a, const auto& b) { return a.time < b.time; });
  Split split;
  std::array<int, kActivitySlots> running{};
  TimeNs previous = 0;
  for (const auto& event : events) {
    const double span = static_cast<double>(event.time - previous) / kNsPerSecond;
    int communicating = 0;
    for (std::size_t k = 1; k < kActivitySlots; ++k) communicating += running[k];
    if (running[0] > 0) {
      split.compute_s += span;
    } else if (communicating > 0) {
      for (std::size_t k = 1; k < kActivitySlots; ++k) split.exposed_s[k - 1] += span * running[k] / communicating;
    }
    running[event.slot] += event.delta;
    previous = event.time;
  }
  return split;
}

TEST_CASE("a rank's time split by hand", "[report]") {
  // Compute [0,100); TP collective [50,150); a send on a link [120,220).
  //   [0,100) compute; [100,120) TP alone; [120,150) TP and PP share; [150,220) PP alone.
  const ActivityProfile device({{0, kCompute, 1}, {100, kCompute, -1}, {50, kTp, 1}, {150, kTp, -1}});
  const ActivityProfile link({{0, kPp, 1}, {100, kPp, -1}});
  const TimeSplit split = account_rank_time({{0, &device}, {120, &link}});
  CHECK(split.compute_s() == Approx(100e-9));
  CHECK(split.exposed_s(static_cast<std::size_t>(CommGroupKind::tp)) == Approx(35e-9));
  CHECK(split.exposed_s(static_cast<std::size_t>(CommGroupKind::pp)) == Approx(85e-9));
}

TEST_CASE("a rank's time split matches the definition on random overlapping runs", "[report]") {
  std::mt19937_64 random(3);
  for (int trial = 0; trial < 3000; ++trial) {
    std::vector<std::vector<ActivityProfile::Event>> events_of_run;
    std::vector<std::unique_ptr<ActivityProfile>> profiles;
    std::vector<ActivityRun> runs;
    const int run_count = 1 + static_cast<int>(random() % 5);
    for (int r = 0; r < run_count; ++r) {
      std::vector<ActivityProfile::Event> events;
      const int ops = static_cast<int>(random() % 8);
      TimeNs cursor = 0;
      for (int i = 0; i < ops; ++i) {
        const auto slot = static_cast<std::uint8_t>(random() % 3 == 0 ? kCompute : 1 + random() % kCommGroupKindCount);
        const TimeNs start = cursor + static_cast<TimeNs>(random() % 30);
        const TimeNs end = start + 1 + static_cast<TimeNs>(random() % 40);
        events.push_back({start, slot, 1});
        events.push_back({end, slot, -1});
        if (random() % 2 == 0) cursor = end;  // sometimes sequential, sometimes overlapping
      }
      profiles.push_back(std::make_unique<ActivityProfile>(events));
      runs.push_back({static_cast<TimeNs>(random() % 200), profiles.back().get()});
      events_of_run.push_back(std::move(events));
    }
    const Split expected = reference_split(runs, events_of_run);
    const TimeSplit actual = account_rank_time(runs);
    INFO("trial " << trial);
    REQUIRE(actual.compute_s() == Approx(expected.compute_s).margin(1e-15));
    for (std::size_t k = 0; k < kCommGroupKindCount; ++k) {
      REQUIRE(actual.exposed_s(k) == Approx(expected.exposed_s[k]).margin(1e-15));
    }
  }
}

TEST_CASE("a time split adds up to the same value in any order", "[report]") {
  SlotCounts tp_and_pp{};
  tp_and_pp[kTp] = 1;
  tp_and_pp[kPp] = 2;
  TimeSplit forward;
  TimeSplit backward;
  const std::array<TimeNs, 4> spans{7, 1'000'000'007, 3, 13};
  for (TimeNs span : spans) forward.add(span, tp_and_pp);
  for (auto it = spans.rbegin(); it != spans.rend(); ++it) backward.add(*it, tp_and_pp);
  CHECK(forward.exposed_s(static_cast<std::size_t>(CommGroupKind::tp)) ==
        backward.exposed_s(static_cast<std::size_t>(CommGroupKind::tp)));
  CHECK(forward.exposed_s(static_cast<std::size_t>(CommGroupKind::pp)) ==
        backward.exposed_s(static_cast<std::size_t>(CommGroupKind::pp)));
}

}  // namespace
}  // namespace weft
