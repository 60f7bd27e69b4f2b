#pragma once

#include <cstdint>
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

// What a grid point no sample measured gets: an error, or the value of the nearest measured
// points (in the logarithms of the coordinates; the mean of those equally near).
enum class GridGaps : std::uint8_t { reject, nearest };

// The table through `samples`: the axes are the distinct coordinates seen along each dimension,
// and every combination must have been measured (the mean where several were). Throws InputError
// naming `what` and the first missing point otherwise, unless `gaps` fills it.
LogGridTable fit_grid_table(const std::vector<GridSample>& samples, const std::vector<std::string>& axis_names,
                            const std::string& what, GridGaps gaps = GridGaps::reject);

}  // namespace weft
