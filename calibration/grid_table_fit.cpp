#include "calibration/grid_table_fit.hpp"

#include <cmath>
#include <limits>
#include <map>
#include <set>

#include <fmt/format.h>

#include "simulator/core/input_error.hpp"

namespace weft {

namespace {

double log_distance(const std::vector<double>& a, const std::vector<double>& b) {
  double sum = 0.0;
  for (std::size_t i = 0; i < a.size(); ++i) sum += std::pow(std::log(a[i] / b[i]), 2);
  return sum;
}

double nearest_value(const std::map<std::vector<double>, std::pair<double, int>>& sums,
                     const std::vector<double>& point) {
  double best = std::numeric_limits<double>::infinity();
  double total = 0.0;
  int count = 0;
  for (const auto& [measured, sum] : sums) {
    const double distance = log_distance(measured, point);
    if (distance < best * (1.0 - 1e-12)) {
      best = distance;
      total = 0.0;
      count = 0;
    }
    if (distance <= best * (1.0 + 1e-12)) {
      total += sum.first / sum.second;
      ++count;
    }
  }
  return total / count;
}

}  // namespace

LogGridTable fit_grid_table(const std::vector<GridSample>& samples, const std::vector<std::string>& axis_names,
                            const std::string& what, GridGaps gaps) {
  const std::size_t dims = axis_names.size();
  std::vector<std::set<double>> coordinates(dims);
  std::map<std::vector<double>, std::pair<double, int>> sums;
  for (const GridSample& sample : samples) {
    for (std::size_t a = 0; a < dims; ++a) coordinates[a].insert(sample.point[a]);
    auto& [sum, count] = sums[sample.point];
    sum += sample.value;
    ++count;
  }
  std::vector<std::vector<double>> axes;
  for (const auto& set : coordinates) axes.emplace_back(set.begin(), set.end());
  std::vector<double> values;
  std::vector<std::size_t> index(dims, 0);
  std::vector<double> point(dims);
  // Every grid point, the last axis varying fastest.
  while (true) {
    for (std::size_t a = 0; a < dims; ++a) point[a] = axes[a][index[a]];
    const auto found = sums.find(point);
    if (found == sums.end() && gaps == GridGaps::nearest) {
      values.push_back(nearest_value(sums, point));
    } else if (found == sums.end()) {
      std::string where;
      for (std::size_t a = 0; a < dims; ++a) where += fmt::format("{}{} = {}", a ? ", " : "", axis_names[a], point[a]);
      throw InputError(what + ": no measurement at " + where + " (the grid needs every combination of its axes)");
    } else {
      values.push_back(found->second.first / found->second.second);
    }
    std::size_t a = dims;
    while (a > 0 && ++index[a - 1] == axes[a - 1].size()) index[--a] = 0;
    if (a == 0) break;
  }
  return LogGridTable(std::move(axes), std::move(values));
}

}  // namespace weft
