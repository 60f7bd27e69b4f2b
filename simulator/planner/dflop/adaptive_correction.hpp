#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <utility>
#include <vector>

#include "simulator/planner/dflop/parallelism_search.hpp"

namespace weft::dflop {

// Input shapes that run slower than their profile says, as DFLOP's evaluation of adaptive
// correction injects them (§5.3.7): a share `rate` of the shapes (a sample's images and padded LLM
// tokens), chosen by a hash of the shape and `seed`, each delayed by `latency` times the plan's
// largest expected stage duration, on the LLM's first stage.
struct Anomalies {
  double rate = 0.0;
  double latency = 0.0;
  std::uint64_t seed = 1;

  bool affects(const SampleShape& sample, std::int64_t pad_to) const;
  // Seconds each sample is delayed under `plan`.
  std::vector<double> delays(std::span<const SampleShape> samples, const DflopPlan& plan, std::int64_t pad_to) const;
};

struct CorrectionOptions {
  double cost = 0.04;       // tracking's overhead, a share of each iteration it runs in (§5.3.7: about 4%)
  int window = 2;           // I: batches of benefit averaged before deciding
  double deviation = 0.05;  // an observed duration this far from the estimate marks its shape
};

// Adaptive correction (papers/003 §3.4.3). While tracking, each batch's observed per-sample
// durations are compared with the scheduler's estimates; a shape whose observed duration departs
// by more than `deviation` gets a penalty, the difference, which the scheduler adds to the
// estimates of that shape from then on. Each batch scheduled with penalties has a benefit B: how
// much less its corrected split's largest bucket load is than the uncorrected split's would be,
// both in observed durations, as a share of the latter (the makespan degradation the deviations
// would have caused). After `window` such batches, tracking stops when their mean B does not exceed
// its cost; the penalties learned stay in use.
class AdaptiveCorrection {
 public:
  explicit AdaptiveCorrection(CorrectionOptions options) : options_(options) {}

  bool tracking() const { return tracking_; }
  // The estimates with the penalties learned so far.
  ItemDurations corrected(std::span<const SampleShape> samples, const ItemDurations& estimate,
                          std::int64_t pad_to) const;
  // After a batch ran while tracking: learns from `observed`; with `benefit` (a batch scheduled
  // with penalties) records it and decides. Returns whether tracking goes on.
  bool observe(std::span<const SampleShape> samples, const ItemDurations& estimate, const ItemDurations& observed,
               std::int64_t pad_to, std::optional<double> benefit);
  std::size_t penalties() const { return penalties_.size(); }
  // How many of `samples` have a shape with a penalty.
  std::size_t penalised(std::span<const SampleShape> samples, std::int64_t pad_to) const;
  const std::vector<double>& benefits() const { return benefits_; }

 private:
  CorrectionOptions options_;
  bool tracking_ = true;
  std::map<std::pair<std::int64_t, std::int64_t>, std::pair<double, double>> penalties_;  // encoder, LLM
  std::vector<double> benefits_;
};

}  // namespace weft::dflop
