#pragma once

#include <ostream>
#include <string>
#include <string_view>

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

// The CSV columns of a plan after its rank (docs/sweep.md), and a plan's cells under them.
inline constexpr std::string_view kSweepCsvPlanColumns =
    "tp,pp,dp,cp,vpp,micro_batch,sequence_parallel,recompute,zero,dp_shard,schedule,layout,module_stages,partition,"
    "status,"
    "reason,iteration_time_s,mfu,"
    "tokens_per_s,tflops_per_gpu,peak_memory_bytes,memory_simulated,bubble_share,exposed_comm_share";
std::string sweep_csv_cells(const PlanOutcome& plan);

// Every plan, one row each: its rank (0 for plans that do not fit), then its cells.
void write_sweep_csv(std::ostream& out, const SweepResult& result);

nlohmann::json sweep_json(const TrainingScenario& base, int gpus, const SweepResult& result);

}  // namespace weft
