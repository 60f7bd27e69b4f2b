#pragma once

// The steps of each pipeline layer of a model, computed once and shared by the estimates of the
// many plans of a sweep that shard it alike (graph size, memory lower bound): building them anew
// per plan is most of a multimodal sweep's enumeration.

#include <vector>

#include "simulator/workload/training_scenario.hpp"

namespace weft {

// One microbatch's steps on one rank, per pipeline layer, each with the blocks anchored to it
// (MultimodalModel::append_steps a layer at a time: the steps of a range of layers are those of its
// layers in order, when it has any).
struct PipelineLayerSteps {
  std::vector<std::vector<Step>> steps;
  std::vector<std::vector<int>> blocks;  // per step: its pipeline layer, or a negative block id
};

// The scenario's layers in its shard context and sample. `head_shares_embedding`: the last
// module's head reads the embedding table on its rank (tied embeddings).
PipelineLayerSteps pipeline_layer_steps(const TrainingScenario& scenario, bool head_shares_embedding);

}  // namespace weft
