#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "simulator/resilience/bamboo_planner.hpp"
#include "simulator/resilience/failure_model.hpp"
#include "simulator/resilience/morphing_planner.hpp"
#include "simulator/resilience/oobleck_planner.hpp"
#include "simulator/resilience/recovery_policy.hpp"

namespace weft {

// What one run may hold, so that no input makes weft simulate for days: failures drawn, and
// checkpoints written.
inline constexpr double kMaxFailuresPerRun = 1e7;
inline constexpr double kMaxCheckpointsPerRun = 1e6;

// One training run over wall-clock time: healthy iterations of a simulated length, interrupted by
// failures drawn from `failures`, recovered by checkpoint-restart or by Oobleck's reinstantiation
// of pipelines, and stopped for planned maintenance.
struct RunSetup {
  double iteration_s = 0.0;  // one healthy iteration, as weft simulates it
  double tokens_per_iteration = 0.0;
  std::int64_t job_nodes = 0;
  std::int64_t job_gpus = 0;
  FailureModel failures;
  // Its checkpoint interval must be set (interval_s) unless checkpoints are off.
  RecoveryPolicy recovery;
  double horizon_s = 0.0;               // the run stops here, trained or not
  std::optional<double> target_tokens;  // and stops earlier once it has trained this many
  int timeline_points = 0;              // samples of training progress over [0, horizon_s]
  // With the oobleck policy, its planner (iteration_s is then its instantiation on every node).
  std::shared_ptr<OobleckPlanner> oobleck;
  // With the varuna policy, its layouts (iteration_s and tokens_per_iteration are then its layout's
  // on every node).
  std::shared_ptr<MorphingPlanner> varuna;
  // With the bamboo policy, its layouts (iteration_s and tokens_per_iteration are then its
  // pipelines' with redundant computation).
  std::shared_ptr<BambooPlanner> bamboo;
  double node_bytes_per_s = 0.0;  // what a node moves across the network: model states copied to it
  // Per cause of failures.slowdowns, per pipeline stage: the rate the job trains at while one GPU of
  // the stage is slowed (the healthy iteration's time over the slowed one's, as weft simulates it).
  std::vector<std::vector<double>> slowdown_rates;

  // Training time between checkpoints: the interval rounded to whole iterations (at least one).
  double checkpoint_work_s() const;
  // Training time that trains target_tokens, in whole iterations.
  std::optional<double> target_work_s() const;
};

// Where one run's wall-clock time went; the eight parts add up to wall_s.
struct RunOutcome {
  double wall_s = 0.0;                // the horizon, or when the target was trained
  double trained_s = 0.0;             // training whose progress was kept
  double lost_s = 0.0;                // training undone by interruptions (since the last checkpoint written)
  double checkpoint_s = 0.0;          // training stopped for checkpoints
  double restart_s = 0.0;             // restarts and checkpoint reloads
  double waiting_s = 0.0;             // too few healthy nodes to run on, waiting for repairs
  double maintenance_s = 0.0;         // stopped for planned maintenance (failures.planned)
  double reconfigure_s = 0.0;         // Oobleck rebuilding pipelines and copying their model states
  double degraded_s = 0.0;            // training slower than the healthy run: the time it lost
  std::int64_t interruptions = 0;     // the job stopped and restarted
  std::int64_t reconfigurations = 0;  // Oobleck rebuilt its pipelines without stopping
  std::int64_t checkpoints = 0;       // written whole
  std::int64_t planned_stops = 0;     // stopped for planned maintenance
  bool reached_target = false;
  // Training time kept at horizon_s × k / timeline_points, k = 1..timeline_points.
  std::vector<double> timeline;
};

// Simulates one run; the same seed gives the same outcome.
RunOutcome simulate_run(const RunSetup& setup, std::uint64_t seed);

}  // namespace weft
