#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "simulator/core/units.hpp"

namespace weft {

// A device's changes of live memory over some time (a template's, relative to its origin): one
// change per instant (instants whose changes cancel are left out), in time order, with the level after each (relative
// to the level before the first) and a sparse table that finds the highest level over any range of changes in O(1).
class MemoryProfile {
 public:
  MemoryProfile() = default;
  // `changes`: (time, delta) in any order; those of one instant are summed.
  explicit MemoryProfile(std::vector<std::pair<TimeNs, Bytes>> changes);

  std::size_t size() const { return times_.size(); }
  bool empty() const { return times_.empty(); }
  TimeNs time(std::size_t i) const { return times_[i]; }
  const std::vector<TimeNs>& times() const { return times_; }
  // The level after change i; level_before(0) is 0.
  Bytes level_after(std::size_t i) const { return levels_[i]; }
  Bytes level_before(std::size_t i) const { return i == 0 ? 0 : levels_[i - 1]; }
  Bytes delta(std::size_t i) const { return level_after(i) - level_before(i); }
  // The first change in [begin, end) (not empty) after which the level is highest.
  std::size_t highest(std::size_t begin, std::size_t end) const;

 private:
  std::size_t higher(std::size_t a, std::size_t b) const { return levels_[b] > levels_[a] ? b : a; }

  std::vector<TimeNs> times_;
  std::vector<Bytes> levels_;
  // table_[k][i]: the first change of highest level in [i, i + 2^(k+1)).
  std::vector<std::vector<std::uint32_t>> table_;
};

}  // namespace weft
