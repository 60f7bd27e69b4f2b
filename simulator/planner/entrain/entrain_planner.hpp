#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "simulator/planner/entrain/pipeline_balancing.hpp"
#include "simulator/planner/entrain/profiling_batch_size.hpp"
#include "simulator/workload/training_scenario.hpp"

namespace weft::entrain {

struct EntrainOptions {
  double alpha = 0.05;    // 1 - confidence of the Bernoulli test (§4.4.2)
  double p_error = 0.05;  // its error limit
  std::int64_t n0 = 1;    // the first profiling batch
  std::int64_t max_profiling_batch = std::int64_t{1} << 16;
  // Batch sizes of the Bernoulli-trial analysis (§4.7.3, Table 4.2).
  std::vector<std::int64_t> trial_sizes = {1, 4, 16, 64, 256};
  std::int64_t dip_iterations = 20;  // weft plan's search for the DIP baseline: MCTS expansions
};

// One hardware topology of Algorithm 3 with the scenario's tensor parallelism and no context
// parallelism: DP replicas, each with the encoder's and the LLM's stages.
struct ComponentConfig {
  int dp = 0;
  int microbatches = 0;         // K = B / (DP x micro-batch)
  std::vector<int> allocation;  // stage groups of TP GPUs per component: encoder, LLM
  LayerPartition encoder;       // Eq. 4.1 over the mean microbatch's layer costs
  LayerPartition llm;
  double iteration_s = 0.0;  // Eq. 4.2 (no resharding: the components share TP)
  double samples_per_s = 0.0;
  std::vector<Bytes> stage_static_memory;  // per stage: parameters, gradients, optimizer states, overhead
  Bytes largest_memory = 0;                // the fullest rank under 1F1B: static memory and warm-up activations
  bool fits = false;                       // within the GPU's memory
};

// One way of running the iteration's batch, timed on the stage model.
struct EntrainRun {
  std::string name;
  TimeNs iteration = 0;  // the slowest replica's pipeline
  double samples_per_s = 0.0;
  // Per replica, the standard deviation over its microbatches of their forward time summed over
  // the component's stages (§4.7.4, Table 4.3), averaged over replicas; negative where the run
  // does not give it (weft plan's).
  double encoder_forward_std_s = 0.0;
  double llm_forward_std_s = 0.0;
  Bytes peak_activations = 0;  // on any rank
  Bytes largest_memory = 0;    // static memory and activations at their peak, on the fullest rank
  bool fits = false;           // within the GPU's memory (the stage model does not stop a run that is not)
  int microbatches = 0;        // per replica, the most
  std::size_t deferred = 0;    // samples whose LLM work ran one microbatch later
};

// Entrain's run under one split of a replica's stage groups (papers/002 Fig. 4.15).
struct AllocationRun {
  ComponentConfig layout;
  TimeNs iteration = 0;
  Bytes largest_memory = 0;  // the run's fullest rank (EntrainRun's)
  bool fits = false;
};

struct EntrainReport {
  int gpus = 0;
  int tp = 0;
  int dp = 0;  // the scenario's: the runs below use it
  std::int64_t global_batch = 0;
  std::int64_t micro_batch = 0;
  double fit_error = 0.0;  // the cost model's worst relative error at its profiled sizes
  // Its estimate of each sample of the b_min batch against weft's costs of the sample alone.
  double estimate_error = 0.0;  // mean relative error
  double worst_estimate_error = 0.0;
  ProfilingBatchSize profiling;
  std::vector<std::pair<std::int64_t, std::vector<std::vector<int>>>> trials;  // Table 4.2
  std::vector<double> proportions;                                             // encoder, LLM work of a b_min batch
  // The iteration's batch is smaller than b_min: Entrain does not promise its allocation then (§4.3).
  bool below_b_min = false;
  std::vector<ComponentConfig> candidates;  // Algorithm 3 over every DP
  // Algorithm 3's choice: the fastest layout that fits, over every DP (dp 0: none fits).
  ComponentConfig best;
  // The runs below keep the scenario's DP, as the paper's evaluation keeps DP 4 (Table 4.1).
  ComponentConfig entrain;         // Algorithm 3's layout at the scenario's DP, from a b_min profile
  ComponentConfig one_microbatch;  // the same from one microbatch's profile (run only if it fits)
  std::vector<EntrainRun> runs;
  std::string dip_refused;                 // why weft plan could not plan the batch (no DIP rows then)
  std::vector<AllocationRun> sensitivity;  // at the scenario's DP, each split Eq. 4.1 can lay out
};

// Entrain (papers/002 ch. 4) on the scenario's model, cluster and per-sample data: its cost model
// (§4.4.1), b_min (Algorithm 2), the configuration search (Algorithm 3) and the hierarchical
// microbatch assignment (Algorithm 4, §4.5.3's split backward and eager forward), each run of the
// iteration's global batch timed on the stage model against the concatenated baseline (samples in
// order, micro-batch by micro-batch) on the same batch. The model must be an encoder component
// (every module before the last) and a language model; InputError otherwise, or without
// per-sample data, or with context parallelism.
EntrainReport plan_entrain(const TrainingScenario& scenario, const EntrainOptions& options);

}  // namespace weft::entrain
