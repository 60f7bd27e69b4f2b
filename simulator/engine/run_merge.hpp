#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>
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
// Runs are taken up in order of their first entry and only those under way are kept in a heap,
// so the cost is O(log of the runs under way at once) per stretch and per entry met at a shared
// instant, not per entry: runs that follow each other cost a binary search each.
template <class Runs, class Visitor>
void merge_runs(const Runs& runs, Visitor& visitor) {
  struct Head {
    TimeNs time;
    std::size_t run;
    std::size_t index;
    // Min-heap order for std::push_heap; ties by run so that the order is canonical.
    bool operator<(const Head& other) const { return time != other.time ? time > other.time : run > other.run; }
  };
  std::vector<std::size_t> waiting;  // runs not under way yet, by their first entry (last first)
  for (std::size_t r = 0; r < runs.size(); ++r) {
    if (runs.count(r) > 0) waiting.push_back(r);
  }
  std::sort(waiting.begin(), waiting.end(), [&](std::size_t a, std::size_t b) {
    const TimeNs ta = runs.time(a, 0);
    const TimeNs tb = runs.time(b, 0);
    return ta != tb ? ta > tb : a > b;
  });
  std::vector<Head> heads;
  auto push = [&](std::size_t run, std::size_t index) {
    heads.push_back({runs.time(run, index), run, index});
    std::push_heap(heads.begin(), heads.end());
  };
  auto pop = [&] {
    std::pop_heap(heads.begin(), heads.end());
    const Head head = heads.back();
    heads.pop_back();
    return head;
  };
  // Runs starting no later than `time` join the heap.
  auto take_up_to = [&](TimeNs time) {
    while (!waiting.empty() && runs.time(waiting.back(), 0) <= time) {
      push(waiting.back(), 0);
      waiting.pop_back();
    }
  };
  auto next_time = [&] {
    TimeNs next = std::numeric_limits<TimeNs>::max();
    if (!heads.empty()) next = heads.front().time;
    if (!waiting.empty()) next = std::min(next, runs.time(waiting.back(), 0));
    return next;
  };
  std::vector<RunEntry> together;
  std::vector<Head> popped;
  while (!heads.empty() || !waiting.empty()) {
    take_up_to(next_time());
    const Head head = pop();
    const TimeNs limit = next_time();
    if (limit > head.time) {
      // Alone until the next entry of another run: every entry of this run before it, found by
      // galloping from the head (stretches are often short) and then bisecting.
      const std::size_t count = runs.count(head.run);
      std::size_t low = head.index + 1;
      std::size_t step = 1;
      while (low + step < count && runs.time(head.run, low + step) < limit) {
        low += step + 1;
        step *= 2;
      }
      std::size_t end = std::min(count, low + step);
      while (low < end) {  // first entry at or after `limit`
        const std::size_t mid = low + (end - low) / 2;
        if (runs.time(head.run, mid) < limit) {
          low = mid + 1;
        } else {
          end = mid;
        }
      }
      visitor.stretch(head.run, head.index, end);
      if (end < runs.count(head.run)) push(head.run, end);
      continue;
    }
    together.assign(1, {head.run, head.index});
    popped.assign(1, head);
    take_up_to(head.time);
    while (!heads.empty() && heads.front().time == head.time) {
      const Head other = pop();
      together.push_back({other.run, other.index});
      popped.push_back(other);
    }
    visitor.instant(head.time, together);
    for (const Head& done : popped) {
      if (done.index + 1 < runs.count(done.run)) push(done.run, done.index + 1);
    }
  }
}

}  // namespace weft
