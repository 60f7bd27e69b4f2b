#include <catch2/catch.hpp>

#include "calibration/rank_correlation.hpp"

namespace weft {
namespace {

TEST_CASE("rank correlation is 1 for the same order and -1 for the opposite", "[calibration]") {
  CHECK(rank_correlation({1, 2, 3, 4}, {10, 20, 30, 400}) == Approx(1.0));
  CHECK(rank_correlation({1, 2, 3, 4}, {4, 3, 2, 1}) == Approx(-1.0));
  CHECK(rank_correlation({1, 1, 1}, {1, 2, 3}) == 0.0);
}

TEST_CASE("rank correlation matches Spearman's formula on a hand-worked example", "[calibration]") {
  // Ranks (1, 2, 3, 4, 5) against (2, 1, 4, 3, 5): d^2 sums to 4, rho = 1 - 6 * 4 / (5 * 24) = 0.8.
  CHECK(rank_correlation({1.0, 2.0, 3.0, 4.0, 5.0}, {0.2, 0.1, 0.4, 0.3, 0.5}) == Approx(0.8));
  // Ties share the mean of their ranks.
  CHECK(fractional_ranks({3.0, 1.0, 3.0, 2.0}) == std::vector<double>{3.5, 1.0, 3.5, 2.0});
}

}  // namespace
}  // namespace weft
