#pragma once

#include <cstdint>

#include "simulator/core/random_stream.hpp"
#include "simulator/resilience/failure_model.hpp"

namespace weft {

// The planned stops of one run (failures.planned, docs/resilience.md): a Poisson process over the
// job's nodes, drawn from a stream of its own (so that the failures and slowdowns a seed draws do
// not depend on them).
class PlannedStops {
 public:
  PlannedStops(const FailureModel& failures, std::int64_t job_nodes, std::uint64_t seed);

  // When the next planned stop comes; infinite when none will.
  double next_event() const { return next_; }
  // The downtime of the stop next_event() said, drawing its cause and the stop after it.
  double take_next();

 private:
  const FailureModel& failures_;
  RandomStream random_;
  double rate_per_s_;
  double next_;
};

}  // namespace weft
