#pragma once

#include <cstdint>
#include <vector>

#include "simulator/workload/time_split.hpp"

namespace weft {

// The ops that start and end on one rank over some time (a template's device, relative to its
// origin, or the primitive ops of a device): per instant in time order, which slots run after it,
// and the time split the ops alone add up to it, so that a stretch with nothing else running
// costs one subtraction.
class ActivityProfile {
 public:
  struct Event {
    TimeNs time = 0;
    std::uint8_t slot = 0;
    std::int8_t delta = 0;  // +1 an op starts, -1 it ends
  };

  ActivityProfile() = default;
  // `events` in any order.
  explicit ActivityProfile(std::vector<Event> events);

  std::size_t size() const { return times_.size(); }
  TimeNs time(std::size_t i) const { return times_[i]; }
  const std::vector<TimeNs>& times() const { return times_; }
  const SlotCounts& running_after(std::size_t i) const { return running_[i]; }
  SlotCounts running_before(std::size_t i) const { return i == 0 ? SlotCounts{} : running_[i - 1]; }
  // The split of [time(0), time(i)) with only these ops running.
  const TimeSplit& split_until(std::size_t i) const { return splits_[i]; }
  // The instants after which no compute op of the profile runs, in order (the last excluded).
  const std::vector<std::uint32_t>& compute_gaps() const { return compute_gaps_; }

 private:
  std::vector<TimeNs> times_;
  std::vector<SlotCounts> running_;
  std::vector<TimeSplit> splits_;
  std::vector<std::uint32_t> compute_gaps_;
};

}  // namespace weft
