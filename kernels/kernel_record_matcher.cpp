#include "kernels/kernel_record_matcher.hpp"

#include <algorithm>
#include <map>

namespace weft {
namespace {

// Collections a record may wait for its partner before it is dropped.
constexpr int kMaxAge = 2;

template <class Table>
void age_and_drop(Table& table) {
  for (auto it = table.begin(); it != table.end();) {
    it = ++it->second.age >= kMaxAge ? table.erase(it) : std::next(it);
  }
}

}  // namespace

void KernelRecordMatcher::add_interval(std::uint32_t correlation, std::uint64_t start, std::uint64_t end) {
  intervals_[correlation].runs.emplace_back(start, end);
}

void KernelRecordMatcher::add_link(std::uint32_t correlation, std::uint64_t span) {
  links_[correlation] = Link{span, 0};
}

std::vector<TimedSpan> KernelRecordMatcher::take() {
  std::map<std::uint64_t, std::vector<std::pair<std::int64_t, std::int64_t>>> kernels;  // by span
  for (auto it = intervals_.begin(); it != intervals_.end();) {
    const auto link = links_.find(it->first);
    if (link == links_.end()) {
      ++it;
      continue;
    }
    auto& runs = kernels[link->second.span];
    for (const auto& [start, end] : it->second.runs) {
      runs.emplace_back(static_cast<std::int64_t>(start), static_cast<std::int64_t>(end));
    }
    links_.erase(link);
    it = intervals_.erase(it);
  }
  age_and_drop(intervals_);
  age_and_drop(links_);
  std::vector<TimedSpan> out;
  out.reserve(kernels.size());
  for (auto& [id, intervals] : kernels) {
    std::sort(intervals.begin(), intervals.end());
    TimedSpan span{static_cast<std::uint32_t>(id), intervals.front().first, intervals.front().second, 0};
    std::int64_t covered_to = span.start_ns;  // the union of the intervals, swept in start order
    for (const auto& [start, end] : intervals) {
      span.busy_ns += std::max<std::int64_t>(0, end - std::max(start, covered_to));
      covered_to = std::max(covered_to, end);
    }
    span.end_ns = covered_to;
    out.push_back(span);
  }
  return out;
}

}  // namespace weft
