#include "cost_models/log_grid_table.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include <boost/container/small_vector.hpp>

#include "simulator/core/input_error.hpp"

namespace weft {

LogGridTable::LogGridTable(std::vector<std::vector<double>> axes, std::vector<double> values)
    : axes_(std::move(axes)), values_(std::move(values)) {
  std::size_t points = 1;
  for (std::size_t a = 0; a < axes_.size(); ++a) {
    const auto& axis = axes_[a];
    if (axis.empty()) throw InputError("table axis " + std::to_string(a) + " has no coordinates");
    for (std::size_t i = 0; i < axis.size(); ++i) {
      if (!(axis[i] > 0.0) || (i > 0 && !(axis[i] > axis[i - 1]))) {
        throw InputError("table axis " + std::to_string(a) + ": coordinates must be positive and increasing");
      }
    }
    points *= axis.size();
  }
  if (values_.size() != points) {
    throw InputError("table has " + std::to_string(values_.size()) + " values for " + std::to_string(points) +
                     " grid points");
  }
}

double LogGridTable::at(std::span<const double> point) const {
  // Per axis: the lower bracketing index and the weight of the upper one.
  boost::container::small_vector<std::size_t, 4> lower(axes_.size());
  boost::container::small_vector<double, 4> weight(axes_.size());
  for (std::size_t a = 0; a < axes_.size(); ++a) {
    const auto& axis = axes_[a];
    const double x = std::clamp(point[a], axis.front(), axis.back());
    const auto upper = static_cast<std::size_t>(std::upper_bound(axis.begin(), axis.end(), x) - axis.begin());
    if (upper >= axis.size()) {
      lower[a] = axis.size() - 1;
      weight[a] = 0.0;
      continue;
    }
    lower[a] = upper - 1;
    weight[a] = (std::log(x) - std::log(axis[upper - 1])) / (std::log(axis[upper]) - std::log(axis[upper - 1]));
  }
  // Sum over the 2^d corners of the bracketing cell.
  double sum = 0.0;
  for (std::size_t corner = 0; corner < (std::size_t{1} << axes_.size()); ++corner) {
    double w = 1.0;
    std::size_t index = 0;
    for (std::size_t a = 0; a < axes_.size(); ++a) {
      const bool up = ((corner >> a) & 1) != 0;
      if (up && weight[a] == 0.0) {
        w = 0.0;
        break;
      }
      w *= up ? weight[a] : 1.0 - weight[a];
      index = index * axes_[a].size() + lower[a] + (up ? 1 : 0);
    }
    if (w != 0.0) sum += w * values_[index];
  }
  return sum;
}

}  // namespace weft
