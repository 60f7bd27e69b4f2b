#include "simulator/engine/device_memory_ledger.hpp"

#include "simulator/engine/run_merge.hpp"

namespace weft {
namespace {

using ProfileRuns = std::vector<std::pair<TimeNs, const MemoryProfile*>>;  // (origin, profile)

// The level instant by instant, as DeviceMemoryTracker keeps it: the level of an instant is the
// one after all of its changes; the peak is the first instant of the highest level.
class PeakFinder {
 public:
  PeakFinder(const ProfileRuns& runs, std::vector<MemoryPoint>* timeline) : runs_(runs), timeline_(timeline) {}

  void stretch(std::size_t run, std::size_t begin, std::size_t end) {
    const auto& [origin, profile] = runs_[run];
    if (timeline_ != nullptr) {
      for (std::size_t i = begin; i < end; ++i) {
        level_ += profile->delta(i);
        close(origin + profile->time(i));
      }
      return;
    }
    const std::size_t top = profile->highest(begin, end);
    const Bytes base = level_ - profile->level_before(begin);
    if (base + profile->level_after(top) > peak_) {
      peak_ = base + profile->level_after(top);
      peak_time_ = origin + profile->time(top);
    }
    level_ = base + profile->level_after(end - 1);
  }

  void instant(TimeNs time, const std::vector<RunEntry>& entries) {
    for (const RunEntry& entry : entries) level_ += runs_[entry.run].second->delta(entry.index);
    close(time);
  }

  void finish(DeviceResult& out) {
    if (timeline_ != nullptr && timeline_->empty()) timeline_->push_back({0, 0});
    out.peak_memory = peak_;
    out.peak_memory_time = peak_time_;
  }

 private:
  void close(TimeNs time) {
    if (level_ > peak_) {
      peak_ = level_;
      peak_time_ = time;
    }
    if (timeline_ == nullptr) return;
    // The tracker's timeline starts at 0 with the level there.
    if (timeline_->empty() && time > 0) timeline_->push_back({0, 0});
    if (timeline_->empty() || timeline_->back().bytes != level_) timeline_->push_back({time, level_});
  }

  const ProfileRuns& runs_;
  std::vector<MemoryPoint>* timeline_;
  Bytes level_ = 0;
  Bytes peak_ = 0;
  TimeNs peak_time_ = 0;
};

}  // namespace

void DeviceMemoryLedger::finish(DeviceResult& out, bool record_timeline) {
  const MemoryProfile singles(std::move(singles_));
  ProfileRuns runs;
  runs.reserve(stamps_.size() + 1);
  if (!singles.empty()) runs.emplace_back(0, &singles);
  for (const Stamp& stamp : stamps_) runs.emplace_back(stamp.origin, stamp.profile);
  out.memory_timeline.clear();
  PeakFinder finder(runs, record_timeline ? &out.memory_timeline : nullptr);
  TimedRuns times;
  times.reserve(runs.size());
  for (const auto& [origin, profile] : runs) times.add(origin, profile->times());
  merge_runs(times, finder);
  finder.finish(out);
  singles_ = {};
  stamps_ = {};
}

}  // namespace weft
