#include "simulator/planner/dflop/piecewise_linear.hpp"

#include <stdexcept>

#include <catch2/catch.hpp>

namespace weft::dflop {
namespace {

TEST_CASE("a piecewise linear profile interpolates between its points and holds its ends", "[dflop]") {
  const PiecewiseLinear f({1.0, 2.0, 4.0}, {10.0, 30.0, 40.0});
  CHECK(f.at(1.0) == 10.0);
  CHECK(f.at(1.5) == Approx(20.0));  // halfway from 10 to 30
  CHECK(f.at(3.0) == Approx(35.0));  // halfway from 30 to 40
  CHECK(f.at(4.0) == 40.0);
  CHECK(f.at(0.25) == 10.0);
  CHECK(f.at(100.0) == 40.0);
  CHECK(PiecewiseLinear({5.0}, {7.0}).at(123.0) == 7.0);
}

TEST_CASE("a piecewise linear profile needs increasing points and as many values", "[dflop]") {
  CHECK_THROWS_AS(PiecewiseLinear({}, {}), std::invalid_argument);
  CHECK_THROWS_AS(PiecewiseLinear({1.0, 2.0}, {1.0}), std::invalid_argument);
  CHECK_THROWS_AS(PiecewiseLinear({1.0, 1.0}, {1.0, 2.0}), std::invalid_argument);
  CHECK_THROWS_AS(PiecewiseLinear({2.0, 1.0}, {1.0, 2.0}), std::invalid_argument);
}

}  // namespace
}  // namespace weft::dflop
