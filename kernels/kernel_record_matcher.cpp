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
  auto [it, inserted] = intervals_.try_emplace(correlation, Interval{start, end, 0});
  if (!inserted) {
    it->second.start = std::min(it->second.start, start);
    it->second.end = std::max(it->second.end, end);
  }
}

void KernelRecordMatcher::add_link(std::uint32_t correlation, std::uint64_t span) {
  links_[correlation] = Link{span, 0};
}

std::vector<TimedSpan> KernelRecordMatcher::take() {
  std::map<std::uint64_t, TimedSpan> spans;
  for (auto it = intervals_.begin(); it != intervals_.end();) {
    const auto link = links_.find(it->first);
    if (link == links_.end()) {
      ++it;
      continue;
    }
    const auto start = static_cast<std::int64_t>(it->second.start);
    const auto end = static_cast<std::int64_t>(it->second.end);
    const std::uint64_t id = link->second.span;
    auto [span, inserted] = spans.try_emplace(id, TimedSpan{static_cast<std::uint32_t>(id), start, end});
    if (!inserted) {
      span->second.start_ns = std::min(span->second.start_ns, start);
      span->second.end_ns = std::max(span->second.end_ns, end);
    }
    links_.erase(link);
    it = intervals_.erase(it);
  }
  age_and_drop(intervals_);
  age_and_drop(links_);
  std::vector<TimedSpan> out;
  out.reserve(spans.size());
  for (const auto& [id, span] : spans) out.push_back(span);
  return out;
}

}  // namespace weft
