#include <catch2/catch.hpp>

#include <cstdint>
#include <functional>
#include <queue>
#include <random>
#include <vector>

#include "simulator/engine/radix_heap.hpp"

namespace weft {
namespace {

TEST_CASE("a radix heap pops keys in the order a binary heap pops them", "[engine]") {
  // Monotone use as the engine makes it: each push at or after the last popped key, keys spread
  // from equal to the last pop up to 2^40 ns ahead, so that every bucket is visited.
  std::mt19937_64 random(7);
  for (int trial = 0; trial < 20; ++trial) {
    RadixHeap<int> heap;
    std::priority_queue<std::uint64_t, std::vector<std::uint64_t>, std::greater<>> reference;
    std::uint64_t now = 0;
    int value = 0;
    for (int step = 0; step < 5000; ++step) {
      const bool pushing = reference.empty() || random() % 3 != 0;
      if (pushing) {
        const int width = static_cast<int>(random() % 41);
        const std::uint64_t ahead = width == 0 ? 0 : random() % (std::uint64_t{1} << width);
        heap.push(now + ahead, value++);
        reference.push(now + ahead);
        continue;
      }
      REQUIRE_FALSE(heap.empty());
      const auto entry = heap.pop();
      REQUIRE(entry.key == reference.top());
      reference.pop();
      now = entry.key;
      // An entry at the current key is popped in place when one remains.
      int same = 0;
      while (heap.pop_if_key(now, same)) {
        REQUIRE(reference.top() == now);
        reference.pop();
      }
    }
    while (!reference.empty()) {
      REQUIRE(heap.pop().key == reference.top());
      reference.pop();
    }
    CHECK(heap.empty());
  }
}

}  // namespace
}  // namespace weft
