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

TEST_CASE("resolved order counts only the pairs whose measured ranges do not overlap", "[calibration]") {
  // Items 0 and 1 overlap (1.05 < 1.1); 2 is apart from both.
  const std::vector<std::pair<double, double>> ranges = {{1.0, 1.1}, {1.05, 1.2}, {2.0, 2.1}};
  const ResolvedOrder alike = resolved_order({1.0, 5.0, 3.0}, ranges);
  CHECK(alike.pairs == 3);
  CHECK(alike.resolved == 2);
  CHECK(alike.agreeing == 1);  // 0 before 2 agrees; 1 before 2 is predicted the other way
  CHECK(resolved_order({3.0, 2.0, 1.0}, ranges).agreeing == 0);
  CHECK(resolved_order({1.0, 1.0, 1.0}, ranges).agreeing == 0);  // a predicted tie orders nothing
  CHECK(resolved_order({1.0, 2.0, 3.0}, ranges).agreeing == 2);
}

}  // namespace
}  // namespace weft
