#pragma once

#include <array>
#include <cstdint>

#include "cost_models/comm_group.hpp"
#include "simulator/core/units.hpp"

namespace weft {

// What runs on a rank at an instant: how many compute ops (slot 0) and how many communication
// ops of each group kind (slot 1 + kind).
inline constexpr std::size_t kActivitySlots = 1 + kCommGroupKindCount;
using SlotCounts = std::array<std::int32_t, kActivitySlots>;

inline SlotCounts operator+(const SlotCounts& a, const SlotCounts& b) {
  SlotCounts sum;
  for (std::size_t s = 0; s < kActivitySlots; ++s) sum[s] = a[s] + b[s];
  return sum;
}

inline SlotCounts operator-(const SlotCounts& a, const SlotCounts& b) {
  SlotCounts difference;
  for (std::size_t s = 0; s < kActivitySlots; ++s) difference[s] = a[s] - b[s];
  return difference;
}

// Where a rank's time goes, added up interval by interval: compute while any compute op runs;
// otherwise, while communication runs, exposed communication split evenly among the ops
// running. Kept in integers (exposed time in units of 1/kExposedScale ns, a multiple of every
// possible count of concurrent ops) so that any order of adding up gives the same answer.
class TimeSplit {
 public:
  __extension__ using Scaled = __int128;  // exposed time, scaled
  // lcm(1, ..., 32): exact for up to 32 communication ops at once.
  static constexpr std::int64_t kExposedScale = 144'403'552'893'600;
  static constexpr std::int32_t kMaxConcurrentComm = 32;

  // Adds an interval of `span` ns during which `running` ops run.
  void add(TimeNs span, const SlotCounts& running) {
    if (running[0] > 0) {
      compute_ns_ += span;
      return;
    }
    std::int32_t communicating = 0;
    for (std::size_t k = 0; k < kCommGroupKindCount; ++k) communicating += running[1 + k];
    if (communicating > 0) add_exposed(span, running, communicating);
  }
  void add_compute(TimeNs span) { compute_ns_ += span; }

  // Adds `later - earlier` (two prefix sums of one profile) without a temporary.
  void add_difference(const TimeSplit& later, const TimeSplit& earlier);
  TimeSplit& operator+=(const TimeSplit& other);

  std::int64_t compute_ns() const { return compute_ns_; }
  double compute_s() const { return static_cast<double>(compute_ns_) / kNsPerSecond; }
  double exposed_s(std::size_t kind) const;

 private:
  // The interval shared evenly among the `communicating` ops of `running`.
  void add_exposed(TimeNs span, const SlotCounts& running, std::int32_t communicating);

  std::int64_t compute_ns_ = 0;
  std::array<Scaled, kCommGroupKindCount> exposed_{};
};

}  // namespace weft
