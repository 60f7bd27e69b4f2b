#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
#include <span>
#include <stdexcept>
#include <utility>
#include <vector>

#include "simulator/core/units.hpp"

namespace weft {

// One entry of a run, as merge_runs hands it to a visitor.
struct RunEntry {
  std::size_t run = 0;
  std::size_t index = 0;
};

// Runs as merge_runs reads them: each an origin and its entries' times relative to it (sorted),
// one load away, since the merge reads times far more often than anything else.
class TimedRuns {
 public:
  void reserve(std::size_t runs) { views_.reserve(runs); }
  void add(TimeNs origin, std::span<const TimeNs> times) { views_.push_back({origin, times.data(), times.size()}); }

  std::size_t size() const { return views_.size(); }
  std::size_t count(std::size_t r) const { return views_[r].count; }
  TimeNs time(std::size_t r, std::size_t i) const { return views_[r].origin + views_[r].times[i]; }

 private:
  struct View {
    TimeNs origin;
    const TimeNs* times;
    std::size_t count;
  };
  std::vector<View> views_;
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
  // 16 bytes, stored and loaded whole (a wider one stalls on store forwarding as it moves).
  struct Head {
    TimeNs time;
    std::uint32_t run;
    std::uint32_t index;
    // Earlier first; ties by run so that the order is canonical.
    bool before(const Head& other) const { return time != other.time ? time < other.time : run < other.run; }
  };
  constexpr std::size_t kMost = std::numeric_limits<std::uint32_t>::max();
  if (runs.size() > kMost) throw std::length_error("merge_runs: more runs than a Head counts");
  // Runs not under way yet, as (first entry's time, run), the last first.
  std::vector<std::pair<TimeNs, std::size_t>> waiting;
  for (std::size_t r = 0; r < runs.size(); ++r) {
    if (runs.count(r) > kMost) throw std::length_error("merge_runs: a run longer than a Head counts");
    if (runs.count(r) > 0) waiting.emplace_back(runs.time(r, 0), r);
  }
  std::sort(waiting.begin(), waiting.end(), std::greater<>());
  // A binary min-heap of the runs under way, kept by hand so that a run that goes on after a
  // stretch takes its new entry in place at the top (one sift down instead of a pop and a push).
  std::vector<Head> heads;
  // Places `moving` at slot i and sifts it down; it is passed by value, not read back from the
  // slot, so that it is never loaded whole from the two stores that wrote it (a store forwarding
  // stall).
  auto sift_down = [&](std::size_t i, const Head moving) {
    const std::size_t n = heads.size();
    for (std::size_t child = 2 * i + 1; child < n; child = 2 * i + 1) {
      if (child + 1 < n && heads[child + 1].before(heads[child])) ++child;
      if (!heads[child].before(moving)) break;
      heads[i] = heads[child];
      i = child;
    }
    heads[i] = moving;
  };
  auto push = [&](std::size_t run, std::size_t index) {
    const Head moving{runs.time(run, index), static_cast<std::uint32_t>(run), static_cast<std::uint32_t>(index)};
    std::size_t i = heads.size();
    heads.push_back(moving);
    while (i > 0 && moving.before(heads[(i - 1) / 2])) {
      heads[i] = heads[(i - 1) / 2];
      i = (i - 1) / 2;
    }
    heads[i] = moving;
  };
  auto pop = [&] {
    const Head top = heads.front();
    const Head last = heads.back();
    heads.pop_back();
    if (!heads.empty()) sift_down(0, last);
    return top;
  };
  auto waiting_time = [&] { return waiting.empty() ? std::numeric_limits<TimeNs>::max() : waiting.back().first; };
  // Runs starting no later than `time` join the heap.
  auto take_up_to = [&](TimeNs time) {
    while (!waiting.empty() && waiting.back().first <= time) {
      push(waiting.back().second, 0);
      waiting.pop_back();
    }
  };
  std::vector<RunEntry> together;
  std::vector<Head> popped;
  while (!heads.empty() || !waiting.empty()) {
    take_up_to(heads.empty() ? waiting_time() : std::min(heads.front().time, waiting_time()));
    const Head head = heads.front();
    // The next entry of any other run: the top's children, or a run not under way yet.
    TimeNs limit = waiting_time();
    if (heads.size() > 1) limit = std::min(limit, heads[1].time);
    if (heads.size() > 2) limit = std::min(limit, heads[2].time);
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
      if (end < count) {
        sift_down(0, {runs.time(head.run, end), head.run, static_cast<std::uint32_t>(end)});
      } else {
        pop();
      }
      continue;
    }
    pop();
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
