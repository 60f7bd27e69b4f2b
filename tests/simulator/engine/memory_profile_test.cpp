#include <catch2/catch.hpp>

#include <random>

#include "simulator/engine/memory_profile.hpp"

namespace weft {
namespace {

TEST_CASE("a memory profile sums the changes of each instant and drops those that cancel", "[engine][memory]") {
  const MemoryProfile profile({{30, 5}, {10, 100}, {30, -5}, {20, -40}, {10, 20}, {40, 7}});
  // 10: +120 -> 120; 20: -40 -> 80; 30: cancels; 40: +7 -> 87.
  REQUIRE(profile.size() == 3);
  CHECK(profile.time(0) == 10);
  CHECK(profile.level_after(0) == 120);
  CHECK(profile.time(1) == 20);
  CHECK(profile.delta(1) == -40);
  CHECK(profile.time(2) == 40);
  CHECK(profile.level_after(2) == 87);
  CHECK(profile.level_before(0) == 0);
}

TEST_CASE("the highest level over a range is the first of the highest, as a scan finds it", "[engine][memory]") {
  std::mt19937_64 random(7);
  for (int trial = 0; trial < 200; ++trial) {
    std::vector<std::pair<TimeNs, Bytes>> changes;
    const int count = 1 + static_cast<int>(random() % 70);
    // Small deltas so that equal levels (ties) are frequent.
    for (int i = 0; i < count; ++i) changes.emplace_back(i, static_cast<Bytes>(random() % 7) - 3);
    const MemoryProfile profile(changes);
    for (std::size_t begin = 0; begin < profile.size(); ++begin) {
      for (std::size_t end = begin + 1; end <= profile.size(); ++end) {
        std::size_t scan = begin;
        for (std::size_t i = begin + 1; i < end; ++i) {
          if (profile.level_after(i) > profile.level_after(scan)) scan = i;
        }
        REQUIRE(profile.highest(begin, end) == scan);
      }
    }
  }
}

}  // namespace
}  // namespace weft
