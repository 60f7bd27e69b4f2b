#include <catch2/catch.hpp>

#include <cmath>

#include "cost_models/log_grid_table.hpp"
#include "simulator/core/input_error.hpp"

namespace weft {
namespace {

TEST_CASE("a log grid table reproduces functions linear in each log coordinate", "[cost_models][calibration]") {
  // f(x, y) = 1 + 2 ln x - 0.5 ln y + 0.25 ln x ln y is linear in ln x for fixed ln y and vice
  // versa, so multilinear interpolation in the logarithms is exact for it.
  auto f = [](double x, double y) {
    return 1.0 + 2.0 * std::log(x) - 0.5 * std::log(y) + 0.25 * std::log(x) * std::log(y);
  };
  const std::vector<double> xs = {64, 256, 1024}, ys = {8, 128};
  std::vector<double> values;
  for (double x : xs) {
    for (double y : ys) values.push_back(f(x, y));
  }
  const LogGridTable table({xs, ys}, values);
  for (double x : {64.0, 100.0, 256.0, 700.0, 1024.0}) {
    for (double y : {8.0, 30.0, 128.0}) {
      const std::array<double, 2> point = {x, y};
      CHECK(table.at(point) == Approx(f(x, y)).epsilon(1e-12));
    }
  }
  // Outside the grid, the nearest edge.
  CHECK(table.at(std::array<double, 2>{10.0, 1000.0}) == Approx(f(64, 128)));
  CHECK(table.at(std::array<double, 2>{5000.0, 1.0}) == Approx(f(1024, 8)));
}

TEST_CASE("a one-point axis is constant along it", "[cost_models][calibration]") {
  const LogGridTable table({{100.0}, {1.0, 4.0}}, {2.0, 4.0});
  // Halfway between 1 and 4 in the logarithm is 2.
  CHECK(table.at(std::array<double, 2>{5.0, 2.0}) == Approx(3.0));
}

TEST_CASE("a log grid table rejects malformed grids", "[cost_models][calibration]") {
  CHECK_THROWS_WITH(LogGridTable({{1.0, 1.0}}, {1.0, 2.0}), Catch::Contains("positive and increasing"));
  CHECK_THROWS_WITH(LogGridTable({{0.0, 1.0}}, {1.0, 2.0}), Catch::Contains("positive and increasing"));
  CHECK_THROWS_WITH(LogGridTable({{1.0, 2.0}}, {1.0}), Catch::Contains("1 values for 2 grid points"));
  CHECK_THROWS_AS(LogGridTable({{}}, {}), InputError);
}

}  // namespace
}  // namespace weft
