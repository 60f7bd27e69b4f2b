#pragma once

#include <utility>
#include <vector>

#include "simulator/engine/memory_profile.hpp"
#include "simulator/engine/simulation_result.hpp"

namespace weft {

// Live bytes of one device over a simulation with composites: single changes arrive in any time
// order (ports of stamped templates change memory at times ahead of the simulation) and a
// stamped template brings its whole profile at once. Nothing in the simulation reads the level,
// so the ledger only collects, and finish() works out the peak (and the timeline, if asked) by
// merging the profiles: a profile that overlaps no other change costs a range-maximum query, not
// a visit per change. The answer is the one DeviceMemoryTracker gives for the same changes.
class DeviceMemoryLedger {
 public:
  void change(TimeNs time, Bytes delta) { singles_.emplace_back(time, delta); }
  // `profile` outlives the ledger (a cached template schedule's).
  void stamp(TimeNs origin, const MemoryProfile& profile) {
    if (!profile.empty()) stamps_.push_back({origin, &profile});
  }

  void finish(DeviceResult& out, bool record_timeline);

 private:
  struct Stamp {
    TimeNs origin;
    const MemoryProfile* profile;
  };

  std::vector<std::pair<TimeNs, Bytes>> singles_;
  std::vector<Stamp> stamps_;
};

}  // namespace weft
