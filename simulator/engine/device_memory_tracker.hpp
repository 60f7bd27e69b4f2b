#pragma once

#include <vector>

#include "simulator/engine/simulation_result.hpp"

namespace weft {

// Live bytes of one device over time. Changes must arrive in non-decreasing time order, which the
// engine guarantees. A tensor lives over [start, end): the level that counts for an instant is
// the one after all of that instant's changes, so a tensor released at t and another allocated at
// t never count together, whatever order the two changes arrive in.
class DeviceMemoryTracker {
 public:
  explicit DeviceMemoryTracker(bool record_timeline = false) : record_timeline_(record_timeline) {}

  void change(TimeNs time, Bytes delta) {
    if (time != instant_) close_instant(time);
    level_ += delta;
  }

  // Closes the last instant and moves the results into `out`.
  void finish(DeviceResult& out) {
    close_instant(instant_);
    out.peak_memory = peak_;
    out.peak_memory_time = peak_time_;
    out.memory_timeline = std::move(timeline_);
  }

 private:
  void close_instant(TimeNs next) {
    if (level_ > peak_) {
      peak_ = level_;
      peak_time_ = instant_;
    }
    if (record_timeline_ && (timeline_.empty() || timeline_.back().bytes != level_)) {
      timeline_.push_back({instant_, level_});
    }
    instant_ = next;
  }

  bool record_timeline_;
  TimeNs instant_ = 0;
  Bytes level_ = 0;
  Bytes peak_ = 0;
  TimeNs peak_time_ = 0;
  std::vector<MemoryPoint> timeline_;
};

}  // namespace weft
