#include "simulator/workload/activity_profile.hpp"

#include <algorithm>

namespace weft {

ActivityProfile::ActivityProfile(std::vector<Event> events) {
  std::sort(events.begin(), events.end(), [](const Event& a, const Event& b) { return a.time < b.time; });
  SlotCounts running{};
  TimeSplit split;
  for (std::size_t i = 0; i < events.size();) {
    const TimeNs time = events[i].time;
    if (!times_.empty()) split.add(time - times_.back(), running);
    for (; i < events.size() && events[i].time == time; ++i) running[events[i].slot] += events[i].delta;
    times_.push_back(time);
    running_.push_back(running);
    splits_.push_back(split);
  }
  for (std::size_t i = 0; i + 1 < times_.size(); ++i) {
    if (running_[i][0] == 0) compute_gaps_.push_back(static_cast<std::uint32_t>(i));
  }
}

}  // namespace weft
