#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "simulator/planner/dip/layer_tuning.hpp"
#include "simulator/planner/dip/priority_search.hpp"
#include "simulator/planner/dip/stage_flows.hpp"
#include "simulator/workload/training_scenario.hpp"

namespace weft::dip {

struct DipOptions {
  int sub_microbatch = 0;  // images per sub-microbatch of image modules; 0: the 95% efficiency rule
  double time_budget_s = 10.0;
  std::int64_t max_iterations = 0;  // MCTS expansions; 0: until the budget runs out
  int threads = 1;
  int rollouts = 10;
  int window = 0;  // see PrioritySearchOptions::window
  std::uint64_t seed = 1;
  int tuning_candidates = 8;  // K of §6.3
  Bytes memory_limit = 0;     // per GPU; 0: the GPU's memory
  bool slowest = false;       // rank for the longest iteration instead (the worst schedule of Fig. 10)
  std::int64_t max_ops = 0;   // the scenario's graph is refused over this many ops (graph_size.hpp; 0: default)
  // Asked before each round of the search and before the plan is simulated: true ends the search
  // as its budget would, and plan_dip returns the plan without its simulation (a Ctrl-C).
  std::function<bool()> stop;
};

// One schedule of the ablation (papers/001 Table 5), timed on the stage model.
struct ScheduleOutcome {
  std::string name;
  TimeNs iteration = 0;  // the pipeline's makespan
  double busy_share = 0.0;
  TimeNs busiest_rank = 0;     // the most stage time on one rank: no order of its stages is faster
  Bytes peak_activations = 0;  // the most any rank holds at once
  // Baselines: the most a rank holds, what it keeps for the iteration and its peak activations.
  Bytes most_memory = 0;
};

// The layer policy a scenario's recompute setting gives every layer. The stage models price
// Megatron-LM's selective recompute, not per-op checkpointing, and one policy for every layer:
// InputError for per-op checkpointing and for full recompute of some layers (recompute_layers).
LayerPolicy layer_policy(const TrainingScenario& scenario);

// Why weft plan and entrain refuse modules on meshes of their own.
inline constexpr std::string_view kOneMesh =
    "parallel.modules: the stage model gives every module the plan's tp and dp (weft dflop times and searches each "
    "module's mesh); leave it out";

struct SimulatedDipPlan;

// One DP replica's batch under the scenario's schedule and as planned, on the stage model.
struct ReplicaOutcome {
  int replica = 0;
  TimeNs baseline = 0;
  TimeNs planned = 0;
};

struct DipPlan {
  int replica = 0;                       // the DP replica planned here: the slowest as planned
  std::vector<ReplicaOutcome> replicas;  // every replica planned (one unless per-sample data)
  std::vector<ModuleSegments> modules;
  std::vector<SampleShape> shapes;  // the planned microbatches (of `replica`)
  StageFlows flows;                 // with the tuned durations and bytes
  StageSchedule schedule;           // each rank's order and the stages' times
  std::vector<int> group_priorities;
  bool searched_ranking = false;  // the search's ranking beat microbatch order (else that is kept)
  // The stage model overlapped the forward pass's TP communication with its GEMMs, as the
  // scenario's stack does (LayerCosts::set_tp_overlap); execution plans run TP collectives apart.
  bool overlaps_tp = false;
  std::vector<std::vector<LayerPolicy>> policy;  // per stage, per layer of it
  // Megatron (the scenario's schedule), + partitioner and interleaving, + ranking, + layer tuning.
  std::vector<ScheduleOutcome> steps;
  // The other baselines timed on the same stage model: Megatron's interleaved 1F1B (2 chunks a
  // rank, balanced by parameters) where the scenario runs one chunk a rank of a shared pipeline.
  std::vector<ScheduleOutcome> other_baselines;
  // Set when a baseline beat DIP's schedule: its name. The plan (flows, schedule, policy) is then
  // that baseline's, so that the plan returned is never slower than a baseline.
  std::string returned_baseline;
  PrioritySearchResult search;
  double search_s = 0.0;
  Bytes static_memory = 0;        // the most any rank holds for the whole iteration
  Bytes activation_limit = 0;     // what the memory limit leaves for activations
  TimeNs megatron_simulated = 0;  // the scenario's plan under the full simulator
  // This plan as weft live runs it, timed by the full simulator (dip_plan_simulation.hpp); empty
  // when DipOptions::stop ended the planning.
  std::shared_ptr<const SimulatedDipPlan> simulation;
};

// PipeWeaver's planner (papers/001 §5-§6) for the batch of `scenario`: partitions the
// modules, builds the batch's stage flows from per-layer costs, ranks segment groups by MCTS
// (each rollout interleaved and tuned, then scored by how little of the ranks' time is bubble),
// interleaves, and tunes each stage pair's layers (keep / selective / full recompute) under the
// memory limit with CBC. The scenario's own
// schedule, timed on the same stage model, is the baseline, with Megatron's interleaved 1F1B
// where the scenario allows it; when one of them is faster than DIP's schedule, the plan is that
// baseline's (returned_baseline). InputError for what it cannot plan:
// context parallelism, zero-bubble baselines, a memory limit the parameters already fill or that
// the activations cannot fit.
//
// With per-sample data each DP replica has a batch of its own and is planned on its own (the time
// budget shared equally; --iterations each), and the iteration waits for the slowest: the plan
// returned is that replica's, with every replica's times in `replicas`.
DipPlan plan_dip(const TrainingScenario& scenario, const DipOptions& options);

}  // namespace weft::dip
