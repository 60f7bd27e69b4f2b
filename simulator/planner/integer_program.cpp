#include "simulator/planner/integer_program.hpp"

#include <algorithm>
#include <climits>
#include <mutex>

#include <CbcModel.hpp>
#include <CoinPackedMatrix.hpp>
#include <OsiClpSolverInterface.hpp>

namespace weft {
namespace {

double coin_bound(double value) {
  if (value >= IntegerProgram::kInfinity) return COIN_DBL_MAX;
  if (value <= -IntegerProgram::kInfinity) return -COIN_DBL_MAX;
  return value;
}

std::vector<double> coin_bounds(const std::vector<double>& values) {
  std::vector<double> out;
  out.reserve(values.size());
  for (const double value : values) out.push_back(coin_bound(value));
  return out;
}

}  // namespace

int IntegerProgram::add_column(double cost, double lower, double upper) {
  objective.push_back(cost);
  column_lower.push_back(lower);
  column_upper.push_back(upper);
  return static_cast<int>(objective.size()) - 1;
}

int IntegerProgram::add_row(double lower, double upper) {
  row_lower.push_back(lower);
  row_upper.push_back(upper);
  return static_cast<int>(row_lower.size()) - 1;
}

void IntegerProgram::set(int row, int column, double value) {
  row_of.push_back(row);
  column_of.push_back(column);
  value_of.push_back(value);
}

IntegerSolution solve_integer_program(const IntegerProgram& program, std::span<const double> warm,
                                      double warm_objective, const SearchLimits& limits) {
  const int columns = static_cast<int>(program.objective.size());
  const CoinPackedMatrix matrix(false, program.row_of.data(), program.column_of.data(), program.value_of.data(),
                                static_cast<CoinBigIndex>(program.value_of.size()));
  const std::vector<double> column_lower = coin_bounds(program.column_lower);
  const std::vector<double> column_upper = coin_bounds(program.column_upper);
  const std::vector<double> row_lower = coin_bounds(program.row_lower);
  const std::vector<double> row_upper = coin_bounds(program.row_upper);
  static std::mutex solver_mutex;
  const std::lock_guard<std::mutex> lock(solver_mutex);
  OsiClpSolverInterface solver;
  solver.messageHandler()->setLogLevel(0);
  solver.loadProblem(matrix, column_lower.data(), column_upper.data(), program.objective.data(), row_lower.data(),
                     row_upper.data());
  for (int c = 0; c < program.integers; ++c) solver.setInteger(c);
  if (limits.seconds > 0.0) solver.getModelPtr()->setMaximumSeconds(limits.seconds);
  CbcModel model(solver);
  model.setLogLevel(0);
  model.messageHandler()->setLogLevel(0);
  if (limits.seconds > 0.0) model.setMaximumSeconds(limits.seconds);
  if (limits.nodes > 0) model.setMaximumNodes(static_cast<int>(std::min<std::int64_t>(limits.nodes, INT_MAX)));
  model.setAllowableFractionGap(limits.fraction_gap);
  if (!warm.empty()) model.setBestSolution(warm.data(), columns, warm_objective);
  model.branchAndBound();
  IntegerSolution out;
  out.proven_optimal = model.isProvenOptimal();
  if (const double* best = model.bestSolution()) out.values.assign(best, best + columns);
  return out;
}

}  // namespace weft
