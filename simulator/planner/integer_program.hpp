#pragma once

#include <cstdint>
#include <limits>
#include <span>
#include <vector>

namespace weft {

// A 0-1 integer program for CBC: minimise objective . x subject to row_lower <= A x <= row_upper,
// column bounds, and the first `integers` columns integer. The matrix is kept as (row, column,
// value) triplets, built at once: appending rows to CBC's matrix one by one copies it each time.
struct IntegerProgram {
  static constexpr double kInfinity = std::numeric_limits<double>::max();

  std::vector<double> objective;  // one per column
  std::vector<double> column_lower;
  std::vector<double> column_upper;
  int integers = 0;
  std::vector<double> row_lower;
  std::vector<double> row_upper;
  std::vector<int> row_of;
  std::vector<int> column_of;
  std::vector<double> value_of;

  // A column of [lower, upper] and objective `cost`; returns its index.
  int add_column(double cost, double lower = 0.0, double upper = 1.0);
  // A row of [lower, upper]; returns its index.
  int add_row(double lower, double upper);
  void set(int row, int column, double value);
};

struct IntegerSolution {
  std::vector<double> values;  // per column; empty when CBC found no solution
  bool proven_optimal = false;
};

// Where CBC's search stops short of a proof. `seconds` (0: none) also bounds the root relaxation,
// which CBC's own limit, checked between nodes, does not; its outcome depends on the machine's
// speed. `nodes` (0: none) counts branch-and-bound nodes and gives the same outcome on every
// machine. `fraction_gap` is the relative gap to the bound at which the search stops.
struct SearchLimits {
  double seconds = 0.0;
  std::int64_t nodes = 0;
  double fraction_gap = 0.0;
};

// CBC's branch and bound on `program`, quietly, one solve at a time in the process (CBC and CLP
// keep state of their own beyond the model), from the `warm` solution (empty: none) whose
// objective is `warm_objective`.
IntegerSolution solve_integer_program(const IntegerProgram& program, std::span<const double> warm,
                                      double warm_objective, const SearchLimits& limits = {});

}  // namespace weft
