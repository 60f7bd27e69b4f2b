#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "simulator/core/units.hpp"

namespace weft {

// One entry of a run, as merge_runs hands it to a visitor.
struct RunEntry {
  std::size_t run = 0;
  std::size_t index = 0;
};

// Visits the entries of several runs in time order. A run is a sequence of entries sorted by
// time, at most one per instant (a stamped template's memory changes, say). `runs` provides
//   std::size_t size() const                          the number of runs
//   std::size_t count(std::size_t run) const          the entries of a run
//   TimeNs time(std::size_t run, std::size_t i) const the absolute time of an entry
// and `visitor`
//   void stretch(std::size_t run, std::size_t begin, std::size_t end)
//       entries [begin, end) of `run` are the only entries of any run from the time of `begin`
//       up to the next entry of another run (exclusive): nothing else happens in between, so a
//       visitor with prefix sums over the run can take them at once;
//   void instant(TimeNs time, const std::vector<RunEntry>& entries)
//       entries of two or more runs at one instant.
// The cost is O(log) per stretch and per entry met at a shared instant, not per entry: runs that
// do not overlap in time cost a binary search each.
template <class Runs, class Visitor>
void merge_runs(const Runs& runs, Visitor& visitor) {
  struct Head {
    TimeNs time;
    std::size_t run;
    std::size_t index;
    // Min-heap order for std::push_heap; ties by run so that the order is canonical.
    bool operator<(const Head& other) const { return time != other.time ? time > other.time : run > other.run; }
  };
  std::vector<Head> heads;
  heads.reserve(runs.size());
  for (std::size_t r = 0; r < runs.size(); ++r) {
    if (runs.count(r) > 0) heads.push_back({runs.time(r, 0), r, 0});
  }
  std::make_heap(heads.begin(), heads.end());
  auto advance = [&](const Head& head, std::size_t next) {
    if (next == runs.count(head.run)) return;
    heads.push_back({runs.time(head.run, next), head.run, next});
    std::push_heap(heads.begin(), heads.end());
  };
  std::vector<RunEntry> together;
  std::vector<Head> popped;
  while (!heads.empty()) {
    std::pop_heap(heads.begin(), heads.end());
    const Head head = heads.back();
    heads.pop_back();
    if (heads.empty() || heads.front().time > head.time) {
      // Alone until the next head, if any: every entry of this run before it.
      std::size_t end = runs.count(head.run);
      if (!heads.empty()) {
        const TimeNs limit = heads.front().time;
        std::size_t low = head.index + 1;
        while (low < end) {  // first entry at or after `limit`
          const std::size_t mid = low + (end - low) / 2;
          if (runs.time(head.run, mid) < limit) {
            low = mid + 1;
          } else {
            end = mid;
          }
        }
      }
      visitor.stretch(head.run, head.index, end);
      advance(head, end);
      continue;
    }
    together.assign(1, {head.run, head.index});
    popped.assign(1, head);
    while (!heads.empty() && heads.front().time == head.time) {
      std::pop_heap(heads.begin(), heads.end());
      together.push_back({heads.back().run, heads.back().index});
      popped.push_back(heads.back());
      heads.pop_back();
    }
    visitor.instant(head.time, together);
    for (const Head& done : popped) advance(done, done.index + 1);
  }
}

}  // namespace weft
