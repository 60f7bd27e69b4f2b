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

enum class PlanStatus : std::uint8_t { ok, oom, invalid };

inline constexpr EnumNames<PlanStatus, 3> kPlanStatusNames({"ok", "oom", "invalid"});

struct PlanOutcome {
  TrainingScenario scenario;
  std::string label;
  PlanStatus status = PlanStatus::ok;
  std::string reason;                    // invalid: the rule broken; oom: which stage, and whether estimated
  std::optional<TrainingReport> report;  // when simulated
  std::vector<Bytes> stage_memory;       // simulated peaks, or the lower-bound estimates
  Bytes memory_capacity = 0;

  bool simulated() const { return report.has_value(); }
  Bytes peak_memory() const;
};

struct SweepOptions {
  int threads = 1;
  // Simulate each repeated pass once and stamp it (false: every op; same answer, slower).
  bool reuse = true;
  // Called now and then, from any thread, with plans finished and plans to simulate.
  std::function<void(std::size_t done, std::size_t total)> progress;
};

struct SweepResult {
  // Ranked: plans that fit, by throughput (then memory headroom, then label); then plans out
  // of memory; then invalid plans; each group otherwise by label.
  std::vector<PlanOutcome> plans;
  std::map<std::string, std::int64_t> invalid_by_reason;
  std::int64_t considered = 0;
  std::int64_t invalid = 0;
  std::int64_t dropped_by_memory_estimate = 0;  // out of memory before simulating
  std::int64_t simulated = 0;
  std::int64_t resumed = 0;        // of those, GPipe plans resumed from their 1F1B plan's checkpoint
  std::int64_t out_of_memory = 0;  // estimated or simulated
  std::int64_t feasible = 0;
};

// Enumerates the grid, drops plans whose memory lower bound exceeds the GPU, simulates the rest
// (folded) on `options.threads` threads, and ranks them. The result does not depend on the
// thread count.
SweepResult run_sweep(const TrainingScenario& base, const SweepGrid& grid, int gpus, const SweepOptions& options);

}  // namespace weft
