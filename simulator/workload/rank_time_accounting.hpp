#pragma once

#include <vector>

#include "simulator/workload/activity_profile.hpp"

namespace weft {

// The ops of an activity profile placed at `origin` (a composite's, or 0).
struct ActivityRun {
  TimeNs origin = 0;
  const ActivityProfile* profile = nullptr;
};

// The time split of one rank over all the ops that ran on its device and its links, given as
// runs. A stretch of one run during which the rest of the rank is idle, or computing, costs
// O(log) whatever its length; only where the rest communicates are its instants visited.
TimeSplit account_rank_time(const std::vector<ActivityRun>& runs);

}  // namespace weft
