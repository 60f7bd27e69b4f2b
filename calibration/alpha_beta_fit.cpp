#include "calibration/alpha_beta_fit.hpp"

#include <Eigen/Dense>

#include "simulator/core/input_error.hpp"

namespace weft {

AlphaBeta fit_alpha_beta(std::span<const SizeTime> points) {
  bool distinct = false;
  for (const SizeTime& p : points) distinct = distinct || p.bytes != points.front().bytes;
  if (!distinct) throw InputError("a latency-bandwidth fit needs measurements at two message sizes or more");
  const auto n = static_cast<Eigen::Index>(points.size());
  // Row i: [1 / t_i, bytes_i / t_i] . [latency, per_byte] = 1.
  Eigen::MatrixXd design(n, 2);
  const Eigen::VectorXd ones = Eigen::VectorXd::Ones(n);
  for (Eigen::Index i = 0; i < n; ++i) {
    const SizeTime& p = points[static_cast<std::size_t>(i)];
    design(i, 0) = 1.0 / p.seconds;
    design(i, 1) = p.bytes / p.seconds;
  }
  const Eigen::Vector2d solution = design.colPivHouseholderQr().solve(ones);
  AlphaBeta fit{solution(0), solution(1)};
  if (fit.latency_s < 0.0) {
    // One unknown left: per_byte = sum(x) / sum(x^2) with x_i = bytes_i / t_i.
    fit.latency_s = 0.0;
    fit.seconds_per_byte = design.col(1).sum() / design.col(1).squaredNorm();
  } else if (fit.seconds_per_byte < 0.0) {
    fit.seconds_per_byte = 0.0;
    fit.latency_s = design.col(0).sum() / design.col(0).squaredNorm();
  }
  return fit;
}

}  // namespace weft
