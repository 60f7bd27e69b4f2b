#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <vector>

namespace weft::entrain {

// ProportionalAllocation (papers/002 §4.4.2): `units` (a replica's GPUs in steps of one stage's
// tensor-parallel group) dealt over components in proportion to their work, rounded to the nearest
// feasible counts: every component at least one unit, then the largest-remainder rule (the
// remainders' ties to the earlier component), summing to `units`. Needs units >= components.
std::vector<int> proportional_allocation(int units, std::span<const double> proportions);

// The number of validation trials k = ceil(ln(alpha) / ln(1 - p_error)) (Algorithm 2, line 1): with
// k trials that agree, a fresh batch gives another allocation with probability at most p_error, at
// confidence 1 - alpha (95% and 5% give 59, §4.7.3).
int validation_trials(double alpha, double p_error);

// One batch size tried by Algorithm 2.
struct ProfilingRound {
  std::int64_t batch = 0;
  std::vector<int> reference;                 // the reference batch's allocation
  std::vector<std::vector<int>> allocations;  // every allocation seen (the reference's first), each once
  int trials = 0;                             // validation batches drawn (stops at the first that differs)
  bool stable = false;
};

struct ProfilingBatchSize {
  std::int64_t batch = 0;  // b_min
  int trials = 0;          // k
  std::vector<ProfilingRound> rounds;
};

// Algorithm 2: from n0, a reference batch of n samples and up to k validation batches, each
// allocated by ProportionalAllocation of the work proportions `proportions(n)` returns for a freshly
// drawn batch of n; the first n whose k trials all match the reference is b_min, else n doubles.
// InputError when n would pass `max_batch`.
ProfilingBatchSize minimum_profiling_batch(const std::function<std::vector<double>(std::int64_t)>& proportions,
                                           int units, double alpha, double p_error, std::int64_t n0,
                                           std::int64_t max_batch);

// The analysis of §4.7.3 (Table 4.2): `trials` batches of `batch` samples, each allocated; the
// distinct allocations seen, in the order first seen.
std::vector<std::vector<int>> allocations_seen(const std::function<std::vector<double>(std::int64_t)>& proportions,
                                               int units, std::int64_t batch, int trials);

}  // namespace weft::entrain
