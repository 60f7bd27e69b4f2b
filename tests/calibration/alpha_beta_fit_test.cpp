#include <catch2/catch.hpp>

#include <random>

#include "calibration/alpha_beta_fit.hpp"
#include "simulator/core/input_error.hpp"

namespace weft {
namespace {

std::vector<SizeTime> sizes_from(double latency, double bandwidth, double noise, unsigned seed) {
  std::mt19937 generator(seed);
  std::uniform_real_distribution<double> jitter(-noise, noise);
  std::vector<SizeTime> points;
  for (double bytes = 1024; bytes <= 64.0 * (1 << 20); bytes *= 4) {
    points.push_back({bytes, (latency + bytes / bandwidth) * (1.0 + jitter(generator))});
  }
  return points;
}

TEST_CASE("exact latency-bandwidth data is fitted exactly", "[calibration]") {
  const auto points = sizes_from(5e-6, 10e9, 0.0, 1);
  const AlphaBeta fit = fit_alpha_beta(points);
  CHECK(fit.latency_s == Approx(5e-6).epsilon(1e-9));
  CHECK(fit.seconds_per_byte == Approx(1.0 / 10e9).epsilon(1e-9));
}

TEST_CASE("noisy measurements of a known model give back its parameters", "[calibration]") {
  // Three percent of noise on every timing, over twenty draws.
  for (unsigned seed = 1; seed <= 20; ++seed) {
    const AlphaBeta fit = fit_alpha_beta(sizes_from(20e-6, 5e9, 0.03, seed));
    CHECK(fit.latency_s == Approx(20e-6).epsilon(0.06));
    CHECK(1.0 / fit.seconds_per_byte == Approx(5e9).epsilon(0.06));
  }
}

TEST_CASE("a fit that would need a negative latency pins it at zero", "[calibration]") {
  // Times proportional to size except the smallest, which is faster than proportional.
  const std::vector<SizeTime> points = {{1000, 0.5e-6}, {2000, 2e-6}, {4000, 4e-6}};
  const AlphaBeta fit = fit_alpha_beta(points);
  CHECK(fit.latency_s == 0.0);
  CHECK(fit.seconds_per_byte > 0.0);
  CHECK_THROWS_AS(fit_alpha_beta(std::vector<SizeTime>{{1000, 1e-6}, {1000, 2e-6}}), InputError);
}

}  // namespace
}  // namespace weft
