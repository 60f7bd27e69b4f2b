#pragma once

#include <utility>
#include <vector>

namespace weft {

// Spearman's rank correlation of two equally long series (at least two values): the Pearson
// correlation of their ranks, ties taking the mean of the ranks they span. 1 when both order the
// items alike, -1 when oppositely; 0 when either series is constant.
double rank_correlation(const std::vector<double>& a, const std::vector<double>& b);

// Ranks from 1, ties sharing their mean rank.
std::vector<double> fractional_ranks(const std::vector<double>& values);

// How well predictions order the pairs of items that measurement tells apart. A pair is resolved
// when its two items' measured ranges (the fastest and the slowest of repeated runs) do not
// overlap; within noise, the measured order of a pair is itself a coin toss. `agreeing` counts the
// resolved pairs the predictions order the same way (a predicted tie does not agree).
struct ResolvedOrder {
  int pairs = 0;
  int resolved = 0;
  int agreeing = 0;
};
ResolvedOrder resolved_order(const std::vector<double>& predicted,
                             const std::vector<std::pair<double, double>>& measured_ranges);

}  // namespace weft
