#pragma once

#include <cstdint>
#include <unordered_map>
#include <utility>
#include <vector>

#include "kernels/backend.hpp"

namespace weft {

// Joins a GPU tracer's records into op spans. The tracer (CUPTI) reports two kinds of record,
// each keyed by the correlation id of the API call that issued the work: the interval a kernel
// or memset ran, and the external id (the op's span) that call was made under. They arrive in any
// order, spread over several buffers, and a buffer may be delivered after the collection that
// wanted it. A span's start is its earliest kernel's start, its end its latest kernel's end, and
// its busy time the length of the union of its kernels' intervals.
//
// What one collection cannot join waits for the next (its partner may be in a later buffer); what
// stays unjoined through two collections is dropped, so that an API call that issued no kernel
// (a failed launch) cannot make the tables grow without end.
class KernelRecordMatcher {
 public:
  void add_interval(std::uint32_t correlation, std::uint64_t start, std::uint64_t end);
  void add_link(std::uint32_t correlation, std::uint64_t span);

  // The spans joined since the last call, ordered by span id.
  std::vector<TimedSpan> take();

  // Records waiting for their partner (for tests and diagnostics).
  std::size_t pending() const { return intervals_.size() + links_.size(); }
  std::size_t pending_intervals() const { return intervals_.size(); }
  std::size_t pending_links() const { return links_.size(); }

 private:
  struct Interval {
    std::vector<std::pair<std::uint64_t, std::uint64_t>> runs;  // (start, end) of each kernel
    int age = 0;
  };
  struct Link {
    std::uint64_t span;
    int age;
  };
  std::unordered_map<std::uint32_t, Interval> intervals_;
  std::unordered_map<std::uint32_t, Link> links_;
};

}  // namespace weft
