#pragma once

#include <string>
#include <utility>
#include <vector>

#include "cost_models/log_grid_table.hpp"

namespace weft {

// A value measured at a point of a grid.
struct GridSample {
  std::vector<double> point;
  double value = 0.0;
};

// The table through `samples`: the axes are the distinct coordinates seen along each dimension,
// and every combination must have been measured (the mean where several were). Throws InputError
// naming `what` and the first missing point otherwise.
LogGridTable fit_grid_table(const std::vector<GridSample>& samples, const std::vector<std::string>& axis_names,
                            const std::string& what);

}  // namespace weft
