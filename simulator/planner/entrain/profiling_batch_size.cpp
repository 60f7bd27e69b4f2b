#include "simulator/planner/entrain/profiling_batch_size.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <string>

#include "simulator/core/input_error.hpp"

namespace weft::entrain {

std::vector<int> proportional_allocation(int units, std::span<const double> proportions) {
  const int components = static_cast<int>(proportions.size());
  if (components == 0 || units < components)
    throw InputError("entrain: " + std::to_string(units) + " GPU groups per replica cannot give each of " +
                     std::to_string(components) + " components one");
  const double total = std::accumulate(proportions.begin(), proportions.end(), 0.0);
  std::vector<double> quota;
  for (const double share : proportions) {
    quota.push_back(total > 0.0 ? static_cast<double>(units) * std::max(share, 0.0) / total
                                : static_cast<double>(units) / components);
  }
  std::vector<int> out;
  for (const double q : quota) out.push_back(std::max(1, static_cast<int>(std::floor(q))));
  int given = std::accumulate(out.begin(), out.end(), 0);
  // Too few: to the largest remainders; too many (minimums raised): from the smallest, above one.
  while (given < units) {
    std::size_t best = 0;
    for (std::size_t i = 1; i < out.size(); ++i) {
      if (quota[i] - out[i] > quota[best] - out[best]) best = i;
    }
    ++out[best];
    ++given;
  }
  while (given > units) {
    std::size_t best = out.size();
    for (std::size_t i = 0; i < out.size(); ++i) {
      if (out[i] > 1 && (best == out.size() || quota[i] - out[i] < quota[best] - out[best])) best = i;
    }
    --out[best];
    --given;
  }
  return out;
}

int validation_trials(double alpha, double p_error) {
  if (!(alpha > 0.0 && alpha < 1.0)) throw InputError("entrain: alpha (1 - confidence) must be in (0, 1)");
  if (!(p_error > 0.0 && p_error < 1.0)) throw InputError("entrain: the error limit must be in (0, 1)");
  return static_cast<int>(std::ceil(std::log(alpha) / std::log1p(-p_error)));
}

ProfilingBatchSize minimum_profiling_batch(const std::function<std::vector<double>(std::int64_t)>& proportions,
                                           int units, double alpha, double p_error, std::int64_t n0,
                                           std::int64_t max_batch) {
  if (n0 < 1) throw InputError("entrain: the first profiling batch must hold at least one sample");
  ProfilingBatchSize out;
  out.trials = validation_trials(alpha, p_error);
  for (std::int64_t n = n0; n <= max_batch; n *= 2) {
    ProfilingRound& round = out.rounds.emplace_back();
    round.batch = n;
    round.reference = proportional_allocation(units, proportions(n));
    round.allocations.push_back(round.reference);
    round.stable = true;
    for (int t = 0; t < out.trials && round.stable; ++t) {
      ++round.trials;
      const std::vector<int> test = proportional_allocation(units, proportions(n));
      if (test != round.reference) {
        round.stable = false;
        round.allocations.push_back(test);
      }
    }
    if (round.stable) {
      out.batch = n;
      return out;
    }
  }
  throw InputError("entrain: no profiling batch up to " + std::to_string(max_batch) +
                   " samples gives a stable allocation");
}

std::vector<std::vector<int>> allocations_seen(const std::function<std::vector<double>(std::int64_t)>& proportions,
                                               int units, std::int64_t batch, int trials) {
  std::vector<std::vector<int>> seen;
  for (int t = 0; t < trials; ++t) {
    std::vector<int> allocation = proportional_allocation(units, proportions(batch));
    if (std::find(seen.begin(), seen.end(), allocation) == seen.end()) seen.push_back(std::move(allocation));
  }
  return seen;
}

}  // namespace weft::entrain
