#include "simulator/engine/memory_profile.hpp"

#include <algorithm>
#include <bit>

namespace weft {

MemoryProfile::MemoryProfile(std::vector<std::pair<TimeNs, Bytes>> changes) {
  auto earlier = [](const auto& a, const auto& b) { return a.first < b.first; };
  if (!std::is_sorted(changes.begin(), changes.end(), earlier)) std::sort(changes.begin(), changes.end(), earlier);
  Bytes level = 0;
  for (std::size_t i = 0; i < changes.size();) {
    const TimeNs time = changes[i].first;
    const Bytes before = level;
    for (; i < changes.size() && changes[i].first == time; ++i) level += changes[i].second;
    if (level == before) continue;
    times_.push_back(time);
    levels_.push_back(level);
  }
  for (std::size_t width = 2; width <= size(); width *= 2) {
    std::vector<std::uint32_t> row(size() - width + 1);
    for (std::size_t i = 0; i < row.size(); ++i) {
      if (width == 2) {
        row[i] = static_cast<std::uint32_t>(higher(i, i + 1));
      } else {
        const auto& half = table_.back();
        row[i] = static_cast<std::uint32_t>(higher(half[i], half[i + width / 2]));
      }
    }
    table_.push_back(std::move(row));
  }
}

std::size_t MemoryProfile::highest(std::size_t begin, std::size_t end) const {
  const std::size_t length = end - begin;
  if (length == 1) return begin;
  // Two windows of the largest power of two that fits cover the range; the first wins ties.
  const auto k = static_cast<std::size_t>(std::bit_width(length) - 2);
  const std::size_t width = std::size_t{2} << k;
  return higher(table_[k][begin], table_[k][end - width]);
}

}  // namespace weft
