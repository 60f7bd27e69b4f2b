#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "simulator/core/random_stream.hpp"
#include "simulator/resilience/failure_model.hpp"

namespace weft {

// The slowdowns of one run (failures.slowdowns, docs/resilience.md): a Poisson process over the
// job's nodes, drawn from a stream of its own (so that the failures a seed draws do not depend on
// them). Each slows one GPU of a pipeline stage drawn uniformly (the job's nodes are spread evenly
// over its stages) for its cause's duration. The job trains at the rate of the slowest one active.
class SlowdownTimeline {
 public:
  // `rates[c][s]`: the rate the job trains at while a GPU of stage s is slowed by cause c (its
  // healthy iteration's time over the slowed one's); `job_nodes` the nodes it trains on.
  SlowdownTimeline(const FailureModel& failures, std::vector<std::vector<double>> rates, std::int64_t job_nodes,
                   std::uint64_t seed);

  // When the next slowdown starts or ends; infinite when none will.
  double next_event() const;
  // Starts or ends what next_event() said, at that time.
  void handle_next_event();
  // The share of the healthy rate the job trains at now: 1 while no slowdown is active.
  double rate() const { return rate_; }

 private:
  const FailureModel& failures_;
  std::vector<std::vector<double>> rates_;
  RandomStream random_;
  double total_rate_per_s_;
  double next_start_;
  std::vector<std::pair<double, double>> active_;  // (end, rate) of the slowdowns under way
  double rate_ = 1.0;
};

}  // namespace weft
