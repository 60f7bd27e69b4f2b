#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "simulator/planner/dflop/adaptive_correction.hpp"
#include "simulator/planner/dflop/full_simulation.hpp"
#include "simulator/planner/dflop/microbatch_scheduler.hpp"
#include "simulator/planner/dflop/model_profiler.hpp"
#include "simulator/planner/dflop/parallelism_search.hpp"
#include "simulator/workload/training_scenario.hpp"

namespace weft::dflop {

struct DflopOptions {
  int iterations = 4;                   // global batches run, each drawn in turn from the data
  SearchLimits ilp{.seconds = 1.0};     // the scheduler's CBC limits, per batch
  std::int64_t profile_samples = 2048;  // the Data Profiler's sample of the dataset
  std::uint64_t seed = 1;               // the baselines' random split of each batch
  Anomalies anomalies;                  // shapes slower than profiled, in every run's timeline
  CorrectionOptions correction;
};

// One way of running the iterations, timed on the stage model (dflop_timeline.hpp).
struct DflopRun {
  std::string name;
  DflopPlan plan;
  BucketMethod split = BucketMethod::random;  // how each batch went into buckets (ILP: the scheduler)
  std::vector<double> iteration_s;            // per iteration
  double mean_iteration_s = 0.0;
  double samples_per_s = 0.0;
  double tflops_per_gpu = 0.0;  // model FLOPs (Megatron's convention) over GPUs and time
};

// The online scheduler on one batch, against the random split of the same batch under the same plan.
struct SchedulerStep {
  BucketAssignment schedule;  // its buckets are in the JSON report, not the text
  double random_c_max = 0.0;
  double solve_ms = 0.0;
};

// Adaptive correction on one batch.
struct CorrectionStep {
  bool tracking = false;          // tracking ran in this batch (and cost its share)
  std::size_t penalties = 0;      // shapes with a penalty when the batch was scheduled
  std::size_t corrected = 0;      // samples of the batch whose estimates they changed
  std::optional<double> benefit;  // B of the batch, where its split used penalties
};

struct DflopReport {
  int gpus = 0;
  int gpus_per_node = 0;
  Bytes memory_capacity = 0;
  std::int64_t global_batch = 0;  // samples per iteration
  std::int64_t pad_to = 0;
  Anomalies anomalies;
  CorrectionOptions correction_options;
  SearchLimits ilp_limits;  // the scheduler's, per batch
  DatasetProfile data;      // the Data Profiler's sample
  ModelProfile profile;
  double profile_ms = 0.0;
  SearchResult dflop;  // Algorithm 1
  double dflop_search_ms = 0.0;
  SearchResult uniform;  // the baselines' space, searched the same way
  double uniform_search_ms = 0.0;
  std::vector<SchedulerStep> scheduler;    // per iteration
  std::vector<CorrectionStep> correction;  // per iteration
  // The scenario's layout and the best uniform one with random splits, DFLOP's layout with a
  // random split, with its scheduler, and with adaptive correction.
  std::vector<DflopRun> runs;
  // Each of their layouts in weft's full simulation, on uniform samples (full_simulation.hpp).
  std::vector<FullSimulation> full;
};

// DFLOP (papers/003 §3) on the scenario's model, cluster and per-sample data: the Model Profiler
// on weft's per-layer costs at every TP degree of each component, the Data Profiler on a sample
// of the dataset, Algorithm 1 over heterogeneous layouts (and, as the baselines' tuned layout,
// over uniform ones), and the Online Microbatch Scheduler on each iteration's batch. Each run is
// timed on the stage model: uniform 3D parallelism with samples split at random (Megatron-LM and
// PyTorch), DFLOP's layout with a random split (its optimizer alone), with its scheduler, and with
// its scheduler and adaptive correction (§3.4.3), `anomalies` slowing every run alike. The
// model must be an encoder component and an LLM reading text, with per-sample data; InputError
// otherwise, or when no layout fits.
DflopReport plan_dflop(const TrainingScenario& scenario, const DflopOptions& options);

}  // namespace weft::dflop
