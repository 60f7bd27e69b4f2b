#pragma once

#include <span>
#include <vector>

namespace weft {

// Values at the points of a grid (every combination of the axes' coordinates), read between the
// points by multilinear interpolation in the logarithms of the coordinates, and at the nearest
// edge outside the grid. What a calibration profile keeps per op class: efficiency over a
// log-spaced grid of shapes.
class LogGridTable {
 public:
  LogGridTable() = default;
  // `axes`: each non-empty, positive and strictly increasing; `values`: one per grid point, the
  // last axis varying fastest. Throws InputError otherwise.
  LogGridTable(std::vector<std::vector<double>> axes, std::vector<double> values);

  // `point` has one coordinate per axis.
  double at(std::span<const double> point) const;

  const std::vector<std::vector<double>>& axes() const { return axes_; }
  const std::vector<double>& values() const { return values_; }

 private:
  std::vector<std::vector<double>> axes_;
  std::vector<double> values_;
};

}  // namespace weft
