#pragma once

#include <memory>
#include <vector>

#include "cost_models/cluster_cost_model.hpp"
#include "cost_models/parallel_dims.hpp"
#include "simulator/graph/graph.hpp"
#include "simulator/workload/pipeline_schedule.hpp"
#include "simulator/workload/training_scenario.hpp"

namespace weft {

// Bytes a rank holds for the whole iteration, by what they are.
struct StaticMemory {
  Bytes parameters = 0;
  Bytes gradients = 0;
  Bytes optimizer_states = 0;
  Bytes framework_overhead = 0;

  Bytes total() const { return parameters + gradients + optimizer_states + framework_overhead; }
};

// What a rank holding `parameters` (bf16), `trained` of them trainable (bf16 gradients, 12 bytes of
// Adam states and master weights each, sharded over the ZeRO shard group's ranks under ZeRO-1:
// ParallelPlan::zero_shards_at: those of its pipeline position `position`) holds for the whole
// iteration, with the framework's overhead.
StaticMemory rank_static_memory(const TrainingScenario& scenario, std::int64_t parameters, std::int64_t trained,
                                int position);

struct SimulatedRank {
  std::int64_t rank = 0;
  RankCoordinates coordinates;
  DeviceId device;
  std::vector<DeviceId> links;  // point-to-point links it sends or receives on
  StaticMemory static_memory;
  std::int64_t parameters = 0;  // parameters it holds
  // The speed of the slowest GPU it stands for, and that GPU (-1 when none is slow:
  // straggler_placement.hpp).
  double speed = 1.0;
  std::int64_t pace_setter = -1;
};

// A pipeline pass of one microbatch as a composite op of the graph (WorkloadOptions::composites).
struct PassOp {
  OpId op;
  int stage = 0;    // pipeline position
  int replica = 0;  // DP replica, with per-sample data
  PipelineAction action;
  bool recompute = false;  // the recompute pass run just before `action`, a backward pass
};

// One training iteration as a graph, with what reports need to read it.
struct TrainingWorkload {
  Graph graph;
  std::unique_ptr<ClusterCostModel> cost_model;
  std::vector<SimulatedRank> ranks;        // stage by stage (replica by replica with per_replica)
  bool folded = true;                      // TP and CP ranks folded (DP too, unless per_replica)
  bool per_replica = false;                // DP replicas simulated apart: per-sample data, or stragglers
  std::optional<MicrobatchShapes> shapes;  // per-sample data: what each microbatch holds
  std::int64_t microbatches = 0;
  double model_flops_per_iteration = 0.0;  // Megatron convention
  std::vector<PassOp> passes;              // in the order they were issued (none without composites)
  // Distinct templates of passes, and of single layers nested in them (none without composites).
  std::size_t pass_templates = 0;
  std::size_t layer_templates = 0;
};

struct WorkloadOptions {
  // Simulate every rank with real multi-member collectives, instead of one rank per pipeline
  // stage (its TP, CP and DP peers do the same work at the same time) with every collective
  // costed for its true group and placement.
  bool unfold = false;
  // Give ops names (layer, op, pass, microbatch) for traces and execution plans; whatever reads
  // only times and memory (sweeps, weft simulate without --trace, run and layout studies) skips them.
  bool name_ops = true;
  // Make each chunk's forward, backward and weight pass a template, recorded once per shape, with
  // each of its layers a nested template shared by identical layers, and every microbatch's pass
  // a composite op of it, so that the engine simulates each pass and layer once per situation
  // (docs/ARCHITECTURE.md, subgraph reuse). Off: every op is in the graph.
  bool composites = true;
  // Refuse, with an InputError that says why, a graph estimated to hold more ops than this
  // (graph_size.hpp); 0: half of this machine's memory's worth.
  std::int64_t max_ops = 0;
};

// Builds the iteration.
TrainingWorkload build_training_workload(const TrainingScenario& scenario, const WorkloadOptions& options = {});

}  // namespace weft
