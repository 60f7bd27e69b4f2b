#include "calibration/alpha_beta_fit.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

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

namespace {

constexpr std::size_t kMaxRegimes = 3;
constexpr std::size_t kMinSizesPerRegime = 3;

// Sum of squared relative errors of the fit of `points`.
double relative_squares(std::span<const SizeTime> points, const AlphaBeta& fit) {
  double sum = 0.0;
  for (const SizeTime& p : points) {
    const double error = (fit.latency_s + fit.seconds_per_byte * p.bytes - p.seconds) / p.seconds;
    sum += error * error;
  }
  return sum;
}

// The points of distinct sizes [a, b): `by_size` holds each size's points, in increasing size, one
// after the other in memory.
std::span<const SizeTime> points_of(const std::vector<std::span<const SizeTime>>& by_size, std::size_t a,
                                    std::size_t b) {
  const SizeTime* first = by_size[a].data();
  const SizeTime* last = by_size[b - 1].data() + by_size[b - 1].size();
  return {first, static_cast<std::size_t>(last - first)};
}

// The best split of the distinct sizes into `regimes` runs of consecutive sizes (dynamic
// programming over the runs' ends).
struct Split {
  double squares = std::numeric_limits<double>::infinity();
  std::vector<std::size_t> ends;  // index into the distinct sizes one past each run
};

Split best_split(const std::vector<std::span<const SizeTime>>& runs_of_size, std::size_t regimes) {
  const std::size_t sizes = runs_of_size.size();
  // squares(a, b): the error of one regime over distinct sizes [a, b).
  auto squares = [&](std::size_t a, std::size_t b) {
    const std::span<const SizeTime> points = points_of(runs_of_size, a, b);
    return relative_squares(points, fit_alpha_beta(points));
  };
  // best[r][b]: the least error of r regimes over the first b distinct sizes, and its ends.
  std::vector<std::vector<Split>> best(regimes + 1, std::vector<Split>(sizes + 1));
  best[0][0].squares = 0.0;
  for (std::size_t r = 1; r <= regimes; ++r) {
    for (std::size_t b = r * kMinSizesPerRegime; b <= sizes; ++b) {
      for (std::size_t a = (r - 1) * kMinSizesPerRegime; a + kMinSizesPerRegime <= b; ++a) {
        if (!std::isfinite(best[r - 1][a].squares)) continue;
        const double total = best[r - 1][a].squares + squares(a, b);
        if (total < best[r][b].squares) {
          best[r][b].squares = total;
          best[r][b].ends = best[r - 1][a].ends;
          best[r][b].ends.push_back(b);
        }
      }
    }
  }
  return best[regimes][sizes];
}

}  // namespace

CommunicationFit fit_regimes(std::span<const SizeTime> points) {
  std::vector<SizeTime> sorted(points.begin(), points.end());
  std::stable_sort(sorted.begin(), sorted.end(),
                   [](const SizeTime& a, const SizeTime& b) { return a.bytes < b.bytes; });
  // The points of each distinct size, in increasing size.
  std::vector<std::span<const SizeTime>> by_size;
  for (std::size_t i = 0; i < sorted.size();) {
    std::size_t j = i;
    while (j < sorted.size() && sorted[j].bytes == sorted[i].bytes) ++j;
    by_size.emplace_back(sorted.data() + i, j - i);
    i = j;
  }
  const AlphaBeta one = fit_alpha_beta(sorted);
  const double count = static_cast<double>(sorted.size());
  double rms = std::sqrt(relative_squares(sorted, one) / count);
  Split chosen;
  for (std::size_t regimes = 2; regimes <= kMaxRegimes && regimes * kMinSizesPerRegime <= by_size.size(); ++regimes) {
    if (rms <= kRegimeSplitRms) break;
    Split split = best_split(by_size, regimes);
    const double split_rms = std::sqrt(split.squares / count);
    if (split_rms > rms / 2) break;
    chosen = std::move(split);
    rms = split_rms;
  }
  if (chosen.ends.empty()) return CommunicationFit(one);
  std::vector<CommunicationFit::Regime> regimes;
  std::size_t begin = 0;
  for (std::size_t end : chosen.ends) {
    const AlphaBeta fit = fit_alpha_beta(points_of(by_size, begin, end));
    const Bytes up_to =
        end == by_size.size()
            ? std::numeric_limits<Bytes>::max()
            : static_cast<Bytes>(std::sqrt(by_size[end - 1].front().bytes * by_size[end].front().bytes));
    regimes.push_back({up_to, fit});
    begin = end;
  }
  return CommunicationFit(std::move(regimes));
}

}  // namespace weft
