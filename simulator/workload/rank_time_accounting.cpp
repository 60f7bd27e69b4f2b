#include "simulator/workload/rank_time_accounting.hpp"

#include <algorithm>

#include "simulator/engine/run_merge.hpp"

namespace weft {
namespace {

class Accountant {
 public:
  explicit Accountant(const std::vector<ActivityRun>& runs) : runs_(runs) {}

  void stretch(std::size_t run, std::size_t begin, std::size_t end) {
    const auto& [origin, profile] = runs_[run];
    advance(origin + profile->time(begin));
    const SlotCounts others = running_ - profile->running_before(begin);
    const std::size_t last = end - 1;
    if (others[0] > 0) {
      split_.add_compute(profile->time(last) - profile->time(begin));
    } else if (others == SlotCounts{}) {
      split_.add_difference(profile->split_until(last), profile->split_until(begin));
    } else {
      // Communication elsewhere: while this run computes, that is compute; in its gaps, the
      // communication of both shares the exposed time.
      split_.add_compute(profile->split_until(last).compute_ns() - profile->split_until(begin).compute_ns());
      const auto& gaps = profile->compute_gaps();
      auto gap = std::lower_bound(gaps.begin(), gaps.end(), static_cast<std::uint32_t>(begin));
      for (; gap != gaps.end() && *gap < last; ++gap) {
        split_.add(profile->time(*gap + 1) - profile->time(*gap), others + profile->running_after(*gap));
      }
    }
    running_ = others + profile->running_after(last);
    previous_ = origin + profile->time(last);
  }

  void instant(TimeNs time, const std::vector<RunEntry>& entries) {
    advance(time);
    for (const RunEntry& entry : entries) {
      const ActivityProfile& profile = *runs_[entry.run].profile;
      running_ = running_ + profile.running_after(entry.index) - profile.running_before(entry.index);
    }
  }

  const TimeSplit& split() const { return split_; }

 private:
  void advance(TimeNs time) {
    split_.add(time - previous_, running_);
    previous_ = time;
  }

  const std::vector<ActivityRun>& runs_;
  SlotCounts running_{};
  TimeNs previous_ = 0;
  TimeSplit split_;
};

}  // namespace

TimeSplit account_rank_time(const std::vector<ActivityRun>& runs) {
  Accountant accountant(runs);
  TimedRuns times;
  times.reserve(runs.size());
  for (const ActivityRun& run : runs) times.add(run.origin, run.profile->times());
  merge_runs(times, accountant);
  return accountant.split();
}

}  // namespace weft
