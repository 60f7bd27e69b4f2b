#include <catch2/catch.hpp>

#include <algorithm>
#include <memory>
#include <random>

#include "simulator/engine/device_memory_ledger.hpp"
#include "simulator/engine/device_memory_tracker.hpp"
#include "tests/support/simulation_comparison.hpp"

namespace weft {
namespace {

// The same changes through the ledger (some grouped into stamped profiles, out of time order)
// and through the tracker (one by one, in time order, as a graph without composites feeds it).
TEST_CASE("the ledger finds the peak and timeline the tracker finds", "[engine][memory]") {
  std::mt19937_64 random(11);
  for (int trial = 0; trial < 2000; ++trial) {
    std::vector<std::pair<TimeNs, Bytes>> all;
    std::vector<std::unique_ptr<MemoryProfile>> profiles;
    DeviceMemoryLedger ledger;
    const bool record = trial % 2 == 0;
    const int stamps = static_cast<int>(random() % 6);
    const TimeNs horizon = 1 + static_cast<TimeNs>(random() % 60);
    for (int s = 0; s < stamps; ++s) {
      const TimeNs origin = static_cast<TimeNs>(random() % static_cast<std::uint64_t>(horizon));
      std::vector<std::pair<TimeNs, Bytes>> changes;
      const int count = static_cast<int>(random() % 12);
      for (int i = 0; i < count; ++i) {
        changes.emplace_back(static_cast<TimeNs>(random() % 20), static_cast<Bytes>(random() % 9) - 4);
      }
      for (const auto& [time, delta] : changes) all.emplace_back(origin + time, delta);
      profiles.push_back(std::make_unique<MemoryProfile>(changes));
      ledger.stamp(origin, *profiles.back());
    }
    const int singles = static_cast<int>(random() % 10);
    for (int i = 0; i < singles; ++i) {
      const auto time = static_cast<TimeNs>(random() % static_cast<std::uint64_t>(horizon + 20));
      const auto delta = static_cast<Bytes>(random() % 9) - 4;
      all.emplace_back(time, delta);
      ledger.change(time, delta);
    }
    std::stable_sort(all.begin(), all.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    DeviceMemoryTracker tracker(record);
    for (const auto& [time, delta] : all) tracker.change(time, delta);
    DeviceResult expected;
    DeviceResult actual;
    tracker.finish(expected);
    ledger.finish(actual, record);
    INFO("trial " << trial);
    test::require_same_memory(actual, expected);
  }
}

TEST_CASE("a stamped profile that overlaps nothing adds its own peak on top of the level", "[engine][memory]") {
  // Hand-computed: level 100 from time 0; a profile +50 at 10, +30 at 20, -60 at 30 stamped at
  // origin 1,000 peaks at 100 + 80 = 180 at time 1,020; a single -100 at 2,000 ends at 20.
  const MemoryProfile profile({{10, 50}, {20, 30}, {30, -60}});
  DeviceMemoryLedger ledger;
  ledger.change(0, 100);
  ledger.stamp(1000, profile);
  ledger.change(2000, -100);
  DeviceResult out;
  ledger.finish(out, true);
  CHECK(out.peak_memory == 180);
  CHECK(out.peak_memory_time == 1020);
  REQUIRE(out.memory_timeline.size() == 5);
  CHECK(out.memory_timeline.back().time == 2000);
  CHECK(out.memory_timeline.back().bytes == 20);
}

}  // namespace
}  // namespace weft
