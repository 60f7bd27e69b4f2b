#include "calibration/sample_stats.hpp"

#include <algorithm>

namespace weft {
namespace {

double quantile(const std::vector<double>& sorted, double q) {
  const double position = q * static_cast<double>(sorted.size() - 1);
  const auto below = static_cast<std::size_t>(position);
  const std::size_t above = std::min(below + 1, sorted.size() - 1);
  const double fraction = position - static_cast<double>(below);
  return sorted[below] + fraction * (sorted[above] - sorted[below]);
}

}  // namespace

SampleStats sample_stats(std::vector<double> samples) {
  std::sort(samples.begin(), samples.end());
  return {quantile(samples, 0.5), samples.front(), samples.back(), quantile(samples, 0.25), quantile(samples, 0.75)};
}

}  // namespace weft
