#include "calibration/rank_correlation.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>

namespace weft {

std::vector<double> fractional_ranks(const std::vector<double>& values) {
  std::vector<std::size_t> order(values.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return values[a] < values[b]; });
  std::vector<double> ranks(values.size());
  for (std::size_t i = 0; i < order.size();) {
    std::size_t j = i;
    while (j + 1 < order.size() && values[order[j + 1]] == values[order[i]]) ++j;
    const double mean = (static_cast<double>(i + j) / 2.0) + 1.0;
    for (std::size_t k = i; k <= j; ++k) ranks[order[k]] = mean;
    i = j + 1;
  }
  return ranks;
}

double rank_correlation(const std::vector<double>& a, const std::vector<double>& b) {
  if (a.size() != b.size() || a.size() < 2)
    throw std::invalid_argument("rank correlation needs two series of equal length >= 2");
  const std::vector<double> x = fractional_ranks(a);
  const std::vector<double> y = fractional_ranks(b);
  const double n = static_cast<double>(x.size());
  const double mean = (n + 1.0) / 2.0;
  double covariance = 0.0, variance_x = 0.0, variance_y = 0.0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    covariance += (x[i] - mean) * (y[i] - mean);
    variance_x += (x[i] - mean) * (x[i] - mean);
    variance_y += (y[i] - mean) * (y[i] - mean);
  }
  if (variance_x == 0.0 || variance_y == 0.0) return 0.0;
  return covariance / std::sqrt(variance_x * variance_y);
}

ResolvedOrder resolved_order(const std::vector<double>& predicted,
                             const std::vector<std::pair<double, double>>& measured_ranges) {
  if (predicted.size() != measured_ranges.size()) {
    throw std::invalid_argument("resolved_order: series of different lengths");
  }
  ResolvedOrder order;
  for (std::size_t a = 0; a < predicted.size(); ++a) {
    for (std::size_t b = a + 1; b < predicted.size(); ++b) {
      ++order.pairs;
      const auto& [a_low, a_high] = measured_ranges[a];
      const auto& [b_low, b_high] = measured_ranges[b];
      const bool a_faster = a_high < b_low;
      if (!a_faster && !(b_high < a_low)) continue;
      ++order.resolved;
      if (a_faster ? predicted[a] < predicted[b] : predicted[b] < predicted[a]) ++order.agreeing;
    }
  }
  return order;
}

}  // namespace weft
