#include "simulator/engine/schedule_cache.hpp"

#include "simulator/core/hash_mix.hpp"

namespace weft {

std::size_t ScheduleKeyHash::operator()(const ScheduleKey& key) const noexcept {
  std::uint64_t h = hash_mix(key.structure, key.durations);
  for (TimeNs offset : key.stream_offsets) h = hash_mix(h, static_cast<std::uint64_t>(offset));
  return static_cast<std::size_t>(h);
}

ScheduleCache& ScheduleCache::shared() {
  static ScheduleCache cache;
  return cache;
}

std::shared_ptr<const TemplateSchedule> ScheduleCache::find(const ScheduleKey& key) {
  std::lock_guard lock(mutex_);
  auto it = entries_.find(key);
  if (it == entries_.end()) {
    ++misses_;
    return nullptr;
  }
  ++hits_;
  return it->second;
}

void ScheduleCache::insert(const ScheduleKey& key, std::shared_ptr<const TemplateSchedule> schedule) {
  std::lock_guard lock(mutex_);
  if (!entries_.emplace(key, std::move(schedule)).second) return;
  insertion_order_.push_back(key);
  if (entries_.size() <= capacity_) return;
  const std::size_t drop = insertion_order_.size() / 2;
  for (std::size_t i = 0; i < drop; ++i) entries_.erase(insertion_order_[i]);
  insertion_order_.erase(insertion_order_.begin(), insertion_order_.begin() + static_cast<std::ptrdiff_t>(drop));
}

ScheduleCacheStats ScheduleCache::stats() const {
  std::lock_guard lock(mutex_);
  ScheduleCacheStats stats{hits_.load(), misses_.load(), fallbacks_.load(), entries_.size()};
  stats.lookups = lookups_.load();
  const std::uint64_t timed = timed_lookups_.load();
  if (timed > 0) {
    stats.lookup_s = static_cast<double>(timed_lookup_ns_.load()) * 1e-9 * static_cast<double>(stats.lookups) /
                     static_cast<double>(timed);
  }
  stats.lookup_s += static_cast<double>(search_ns_.load()) * 1e-9;
  stats.simulation_s = static_cast<double>(simulation_ns_.load()) * 1e-9;
  return stats;
}

}  // namespace weft
