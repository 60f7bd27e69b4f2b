#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "simulator/planner/sweep_grid.hpp"
#include "simulator/workload/training_report.hpp"

namespace weft {

// pruned: not simulated, because its iteration bound shows it cannot enter the sweep's top k.
enum class PlanStatus : std::uint8_t { ok, oom, pruned, invalid };

inline constexpr EnumNames<PlanStatus, 4> kPlanStatusNames({"ok", "oom", "pruned", "invalid"});

struct PlanOutcome {
  TrainingScenario scenario;
  std::string label;
  PlanStatus status = PlanStatus::ok;
  std::string reason;                    // invalid: the rule broken; oom: which stage, and whether estimated
  std::optional<TrainingReport> report;  // when simulated
  std::vector<Bytes> stage_memory;       // simulated peaks, or the lower-bound estimates
  Bytes memory_capacity = 0;
  std::int64_t graph_ops = 0;  // ops its graph would hold (graph_size.hpp), for plans to simulate
  // For plans to simulate: the least iteration time its compute allows (iteration_bound.hpp), in
  // ns; none where no bound is known.
  std::optional<TimeNs> iteration_bound;
  // When simulated: its communicator placements the cluster's calibration profile measured no
  // communication over (ClusterCostModel::placements_without_calibration).
  std::vector<CommGroup> uncalibrated_placements;

  bool simulated() const { return report.has_value(); }
  Bytes peak_memory() const;
};

// The reason of a plan whose graph is over the op limit (graph_size.hpp).
inline constexpr const char* kGraphTooLarge = "graph over the op limit (--max-ops)";

struct SweepOptions {
  int threads = 1;
  // A plan whose graph would hold more ops is not simulated (invalid); 0: graph_op_limit's default.
  std::int64_t max_ops = 0;
  // Simulate each repeated pass once and stamp it (false: every op; same answer, slower).
  bool reuse = true;
  // k > 0: leave unsimulated (pruned) every plan whose iteration bound is slower than the k-th
  // best simulated plan, which cannot enter the top k; plans are simulated in blocks, best bound
  // first, so which are pruned does not depend on the thread count. 0: simulate every plan.
  std::size_t prune_beyond_top = 0;
  // Called now and then, from any thread, with plans finished and plans to simulate.
  std::function<void(std::size_t done, std::size_t total)> progress;
  // Called from any thread, several at once, as each plan's simulation is done (to record it).
  std::function<void(const PlanOutcome& plan)> on_simulated;
  // Asked from any thread before each plan: true leaves it and every later one unsimulated (a
  // Ctrl-C); the plans already under way are finished.
  std::function<bool()> stop;
};

// Where a sweep's time went, in seconds summed over its threads.
struct SweepPhaseTimes {
  double derive = 0.0;    // deriving each plan's scenario from the grid and checking its rules
  double estimate = 0.0;  // the memory lower bound and graph size of each valid plan
  double graph = 0.0;     // building the workloads of the simulated plans (graphs, pass templates)
  double engine = 0.0;    // simulating them: template lookups, template simulations, stamping
  double report = 0.0;    // their reports
};

struct SweepResult {
  // Ranked: plans that fit, by throughput (then memory headroom, then label); then plans out
  // of memory; then pruned plans; then invalid plans; each group otherwise by label.
  std::vector<PlanOutcome> plans;
  std::map<std::string, std::int64_t> invalid_by_reason;
  std::int64_t considered = 0;
  std::int64_t invalid = 0;
  std::int64_t dropped_by_memory_estimate = 0;  // out of memory before simulating
  std::int64_t simulated = 0;
  std::int64_t resumed = 0;        // of those, GPipe plans resumed from their 1F1B plan's checkpoint
  std::int64_t reused = 0;         // of those, plans whose outcome was given, not simulated (sweep_journal.hpp)
  std::int64_t unfinished = 0;     // of those, plans left unsimulated by SweepOptions::stop
  std::int64_t pruned = 0;         // plans to simulate left unsimulated by their bound (not in `simulated`)
  std::int64_t out_of_memory = 0;  // estimated or simulated
  std::int64_t feasible = 0;
  // Ops the graphs of the plans to simulate hold, summed (graph_size.hpp): what a sweep's time
  // scales with. Plans restored from a journal no longer count.
  std::int64_t estimated_graph_ops = 0;
  SweepPhaseTimes phases;

  bool interrupted() const { return unfinished > 0; }
};

// Enumerates the grid and settles the plans that need no simulation: invalid ones, and those whose
// memory lower bound exceeds the GPU, and those whose graph would hold more than `max_ops` ops
// (graph_op_limit). The others wait (status ok, no report), in enumeration order.
SweepResult enumerate_sweep(const TrainingScenario& base, const SweepGrid& grid, int gpus, std::int64_t max_ops = 0);

// Simulates the plans that wait (folded) on `options.threads` threads, or with
// `options.prune_beyond_top` those that may enter the top k, and ranks every plan. A plan given
// its outcome before (a report) is taken as it is. When `options.stop` ends the sweep early,
// `unfinished` says how many plans still wait, and the plans are left unranked.
void simulate_sweep(SweepResult& sweep, const SweepOptions& options);

// Both: the result does not depend on the thread count.
SweepResult run_sweep(const TrainingScenario& base, const SweepGrid& grid, int gpus, const SweepOptions& options);

}  // namespace weft
