#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "simulator/engine/template_schedule.hpp"

namespace weft {

// What a template's schedule depends on: its structure and the durations of its ops (both as
// 64-bit hashes; a collision is not detected) and how late each of its streams becomes free.
struct ScheduleKey {
  std::uint64_t structure = 0;
  std::uint64_t durations = 0;
  std::vector<TimeNs> stream_offsets;

  bool operator==(const ScheduleKey&) const = default;
};

struct ScheduleKeyHash {
  std::size_t operator()(const ScheduleKey& key) const noexcept;
};

struct ScheduleCacheStats {
  std::uint64_t hits = 0;
  std::uint64_t misses = 0;
  std::uint64_t fallbacks = 0;  // simulations that could not reuse exactly and ran in full
  std::size_t entries = 0;
  // Where the engines' time on templates went, summed over threads, nested templates inside the
  // ones they belong to: finding the schedule of each composite (searches of the cache timed, the
  // quicker lookups estimated from one in kTimedLookupEvery timed) and simulating the templates
  // the cache did not hold.
  std::uint64_t lookups = 0;
  double lookup_s = 0.0;
  double simulation_s = 0.0;
};

// Template schedules shared by every simulation in the process and by every thread: a sweep's
// plans reuse each other's layers (temporal reuse). Bounded: past `capacity` entries the oldest
// half is dropped.
class ScheduleCache {
 public:
  explicit ScheduleCache(std::size_t capacity = 1 << 16) : capacity_(capacity) {}

  static ScheduleCache& shared();

  std::shared_ptr<const TemplateSchedule> find(const ScheduleKey& key);
  void insert(const ScheduleKey& key, std::shared_ptr<const TemplateSchedule> schedule);
  void count_fallback() { ++fallbacks_; }
  // Hits answered from a copy of an entry kept by the caller.
  void count_hits(std::uint64_t hits) { hits_ += hits; }
  // One quick lookup in kTimedLookupEvery is timed (timing each would cost about as much as it), and
  // every search of this cache: `timed_ns` is the sampled lookups' time but for searches,
  // `search_ns` the searches' but for the simulations they ran.
  static constexpr std::uint64_t kTimedLookupEvery = 64;
  void count_lookups(std::uint64_t lookups, std::uint64_t timed, std::int64_t timed_ns, std::int64_t search_ns) {
    lookups_ += lookups;
    timed_lookups_ += timed;
    timed_lookup_ns_ += timed_ns;
    search_ns_ += search_ns;
  }
  void add_simulation_time(std::int64_t ns) { simulation_ns_ += ns; }

  ScheduleCacheStats stats() const;

 private:
  std::size_t capacity_;
  mutable std::mutex mutex_;
  std::unordered_map<ScheduleKey, std::shared_ptr<const TemplateSchedule>, ScheduleKeyHash> entries_;
  std::vector<ScheduleKey> insertion_order_;
  std::atomic<std::uint64_t> hits_{0};
  std::atomic<std::uint64_t> misses_{0};
  std::atomic<std::uint64_t> fallbacks_{0};
  std::atomic<std::uint64_t> lookups_{0};
  std::atomic<std::uint64_t> timed_lookups_{0};
  std::atomic<std::int64_t> timed_lookup_ns_{0};
  std::atomic<std::int64_t> search_ns_{0};
  std::atomic<std::int64_t> simulation_ns_{0};
};

}  // namespace weft
