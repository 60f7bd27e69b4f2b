#pragma once

#include <vector>

namespace weft::dflop {

// A function known at increasing points: linear between them, held at its first and last values
// outside them (DFLOP's profiles are linear interpolations over a grid, papers/003 §3.2.1).
class PiecewiseLinear {
 public:
  PiecewiseLinear() = default;
  // `x` strictly increasing, `y` as many values; std::invalid_argument otherwise or when empty.
  PiecewiseLinear(std::vector<double> x, std::vector<double> y);

  double at(double v) const;
  const std::vector<double>& x() const { return x_; }
  const std::vector<double>& y() const { return y_; }

 private:
  std::vector<double> x_;
  std::vector<double> y_;
};

}  // namespace weft::dflop
