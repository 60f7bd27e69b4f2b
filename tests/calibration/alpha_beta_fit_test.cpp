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

namespace weft {
namespace {

// Sizes 1 KiB to 1 GiB in x4 steps, timed by the line of the regime each falls in: {up to, line}.
std::vector<SizeTime> regime_sizes(const std::vector<std::pair<double, AlphaBeta>>& regimes) {
  std::vector<SizeTime> points;
  for (double bytes = 1024; bytes <= double(1 << 30); bytes *= 4) {
    for (const auto& [up_to, line] : regimes) {
      if (bytes > up_to) continue;
      points.push_back({bytes, line.latency_s + line.seconds_per_byte * bytes});
      break;
    }
  }
  return points;
}

TEST_CASE("measurements bent by protocol switches are fitted by one line per regime", "[calibration]") {
  // NCCL-like: LL (low latency, a fraction of the bandwidth) up to 64 KiB, LL128 up to 4 MiB,
  // Simple beyond (highest latency, full bandwidth).
  const AlphaBeta ll{4e-6, 1.0 / 20e9}, ll128{12e-6, 1.0 / 90e9}, simple{40e-6, 1.0 / 180e9};
  const double inf = 1e30;
  const auto points = regime_sizes({{65536, ll}, {4 << 20, ll128}, {inf, simple}});
  const CommunicationFit fit = fit_regimes(points);
  REQUIRE(fit.regimes.size() == 3);
  for (const SizeTime& p : points) {
    CHECK(fit.seconds(static_cast<Bytes>(p.bytes)) == Approx(p.seconds).epsilon(1e-9));
  }
  CHECK(fit.regimes[0].fit.latency_s == Approx(ll.latency_s).epsilon(1e-9));
  CHECK(fit.regimes[2].fit.seconds_per_byte == Approx(simple.seconds_per_byte).epsilon(1e-9));
  // Each boundary lies between the last size of one regime and the first of the next (geometric mean).
  CHECK(fit.regimes[0].up_to == 131072);   // sqrt(64 KiB x 256 KiB)
  CHECK(fit.regimes[1].up_to == 8 << 20);  // sqrt(4 MiB x 16 MiB)

  // Two regimes: two lines, not three.
  const auto two = fit_regimes(regime_sizes({{65536, ll}, {inf, simple}}));
  CHECK(two.regimes.size() == 2);
}

TEST_CASE("one line that explains the measurements within the noise stays one regime", "[calibration]") {
  for (unsigned seed = 1; seed <= 20; ++seed) {
    const CommunicationFit fit = fit_regimes(sizes_from(20e-6, 5e9, 0.03, seed));
    REQUIRE(fit.regimes.size() == 1);
    CHECK(1.0 / fit.regimes.front().fit.seconds_per_byte == Approx(5e9).epsilon(0.06));
  }
  // Too few sizes to split (three per regime): one line, however bent.
  const std::vector<SizeTime> five = {{1e3, 1e-6}, {1e4, 1e-6}, {1e5, 1e-6}, {1e6, 1e-4}, {1e7, 1e-3}};
  CHECK(fit_regimes(five).regimes.size() == 1);
}

}  // namespace
}  // namespace weft
