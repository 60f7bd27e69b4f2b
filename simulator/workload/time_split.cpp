#include "simulator/workload/time_split.hpp"

#include <stdexcept>

namespace weft {

void TimeSplit::add_exposed(TimeNs span, const SlotCounts& running, std::int32_t communicating) {
  if (communicating > kMaxConcurrentComm) {
    throw std::logic_error("more than 32 communication ops run at once on one rank");
  }
  const Scaled share = Scaled{span} * (kExposedScale / communicating);
  for (std::size_t k = 0; k < kCommGroupKindCount; ++k) {
    if (running[1 + k] != 0) exposed_[k] += share * running[1 + k];
  }
}

TimeSplit& TimeSplit::operator+=(const TimeSplit& other) {
  compute_ns_ += other.compute_ns_;
  for (std::size_t k = 0; k < kCommGroupKindCount; ++k) exposed_[k] += other.exposed_[k];
  return *this;
}

void TimeSplit::add_difference(const TimeSplit& later, const TimeSplit& earlier) {
  compute_ns_ += later.compute_ns_ - earlier.compute_ns_;
  for (std::size_t k = 0; k < kCommGroupKindCount; ++k) exposed_[k] += later.exposed_[k] - earlier.exposed_[k];
}

double TimeSplit::exposed_s(std::size_t kind) const {
  // Whole nanoseconds first, then the remainder: both exact in a double for any real iteration.
  const Scaled ns = exposed_[kind] / kExposedScale;
  const Scaled remainder = exposed_[kind] % kExposedScale;
  return (static_cast<double>(ns) + static_cast<double>(remainder) / static_cast<double>(kExposedScale)) / kNsPerSecond;
}

}  // namespace weft
