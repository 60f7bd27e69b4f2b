#pragma once

#include <cstddef>
#include <span>
#include <vector>

#include "simulator/planner/dip/layer_costs.hpp"
#include "simulator/planner/dip/module_segments.hpp"
#include "simulator/planner/dip/stage_interleaving.hpp"
#include "simulator/workload/stage_graph.hpp"

namespace weft::dip {

// What a pipeline stage of a stage flow runs: layers [first_layer, end_layer) for one
// sub-microbatch of a microbatch.
struct StageWork {
  int microbatch = 0;
  std::size_t module = 0;  // index in the model spec (the first module's, for a mixed chunk)
  int sub_microbatch = 0;  // its index in the microbatch
  int chunk = 0;           // the module's model chunk (a virtual stage, for Megatron's chunks)
  int first_layer = 0;
  int end_layer = 0;
  SampleShape shape;  // what its layers see
};

// The simulated stage flows of a batch (papers/001 §5, Fig. 6a): every pipeline stage with its
// latency and the activation bytes it holds, and the pipeline segment groups MCTS ranks.
struct StageFlows {
  std::vector<PipelineStage> stages;
  std::vector<StageWork> work;  // per stage
  std::vector<int> group;       // per stage: its pipeline segment group
  // Per group: the microbatch and the module (spec index) it holds, and the groups of upstream
  // modules of the same microbatch it follows (smaller indices: groups are listed microbatch by
  // microbatch, modules in pipeline order).
  std::vector<int> group_microbatch;
  std::vector<std::size_t> group_module;
  std::vector<std::vector<int>> follows;
  int ranks = 0;

  // The busy time of every stage together.
  TimeNs busy() const;
};

// The stages' durations and held bytes when every layer follows `policy[layer]` (pipeline layers).
void apply_layer_policy(StageFlows& flows, LayerCosts& costs, std::span<const LayerPolicy> policy);

// PipeWeaver's flows: each module's microbatch items split into sub-microbatches, each running
// through the module's segments (a forward stage per model chunk, each chunk's on rank chunk mod
// pp), the module starting once every sub-microbatch of the modules it reads has left their last
// chunk; backward stages in reverse, for modules the frozen rule gives backward passes, each
// freeing its forward stage's bytes. A microbatch gives a module no stages when it gives it no
// tokens.
StageFlows build_dip_flows(std::span<const ModuleSegments> modules, std::span<const SampleShape> shapes, int pp,
                           LayerCosts& costs, std::span<const LayerPolicy> policy);

// Megatron's flows: whole microbatches through virtual stages of `stage_layers` consecutive layers
// (pp * chunks entries; virtual stage v on rank v mod pp), each after the stages `graph` says it
// reads (a chain, or encoders side by side under modality parallelism); one group per microbatch.
StageFlows build_megatron_flows(std::span<const int> stage_layers, const StageGraph& graph,
                                std::span<const SampleShape> shapes, int pp, LayerCosts& costs,
                                std::span<const LayerPolicy> policy);

// The priorities the interleaver sorts its queues by, from group priorities (distinct, larger
// first, each below those of the groups it follows): forward stages take their group's; backward
// stages take that of their microbatch's last group, then go modules in reverse, so that a rank's
// backward queue runs microbatches in the order their backbone ran forward and never puts a
// backward stage ahead of the one it waits for.
std::vector<int> stage_priorities(const StageFlows& flows, std::span<const int> group_priorities);

// Microbatch order, upstream modules first: what the search starts from.
std::vector<int> default_group_priorities(const StageFlows& flows);

}  // namespace weft::dip
