#include "simulator/planner/dflop/piecewise_linear.hpp"

#include <algorithm>
#include <stdexcept>
#include <utility>

namespace weft::dflop {

PiecewiseLinear::PiecewiseLinear(std::vector<double> x, std::vector<double> y) : x_(std::move(x)), y_(std::move(y)) {
  if (x_.empty() || x_.size() != y_.size())
    throw std::invalid_argument("PiecewiseLinear: expected as many values as points, at least one");
  if (std::adjacent_find(x_.begin(), x_.end(), [](double a, double b) { return !(a < b); }) != x_.end())
    throw std::invalid_argument("PiecewiseLinear: expected strictly increasing points");
}

double PiecewiseLinear::at(double v) const {
  if (v <= x_.front()) return y_.front();
  if (v >= x_.back()) return y_.back();
  const auto upper = std::upper_bound(x_.begin(), x_.end(), v);
  const std::size_t hi = static_cast<std::size_t>(upper - x_.begin());
  const std::size_t lo = hi - 1;
  const double t = (v - x_[lo]) / (x_[hi] - x_[lo]);
  return y_[lo] + t * (y_[hi] - y_[lo]);
}

}  // namespace weft::dflop
