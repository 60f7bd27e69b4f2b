#pragma once

#include <ostream>
#include <string>

#include <nlohmann/json.hpp>

#include "simulator/planner/sweep.hpp"

namespace weft {

// Shares of one plan's iteration, averaged over its pipeline stages.
struct TimeShares {
  double compute = 0.0;
  double bubble = 0.0;
  double exposed_comm = 0.0;
  std::array<double, kCommGroupKindCount> exposed_by_group{};
};
TimeShares time_shares(const TrainingReport& report);

// The text `weft sweep` prints: counts, reasons, and the top plans.
std::string render_sweep_report(const TrainingScenario& base, int gpus, const SweepResult& result, std::size_t top);

// Every plan, one row each (docs/sweep.md lists the columns).
void write_sweep_csv(std::ostream& out, const SweepResult& result);

nlohmann::json sweep_json(const TrainingScenario& base, int gpus, const SweepResult& result);

}  // namespace weft
