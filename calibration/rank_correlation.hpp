#pragma once

#include <vector>

namespace weft {

// Spearman's rank correlation of two equally long series (at least two values): the Pearson
// correlation of their ranks, ties taking the mean of the ranks they span. 1 when both order the
// items alike, -1 when oppositely; 0 when either series is constant.
double rank_correlation(const std::vector<double>& a, const std::vector<double>& b);

// Ranks from 1, ties sharing their mean rank.
std::vector<double> fractional_ranks(const std::vector<double>& values);

}  // namespace weft
