#pragma once

#include <vector>

#include "simulator/workload/pipeline_layer_steps.hpp"
#include "simulator/workload/training_scenario.hpp"

namespace weft {

// A lower bound on each pipeline stage's peak memory, without simulating: parameters, gradients,
// optimizer states and framework overhead, plus the activations the schedule must hold at once
// (stage s of 1F1B or ZB-H1 keeps min(m, pp - s) microbatches, GPipe all m, interleaved its
// warm-up chunks plus one). Transient buffers are left out, so a plan whose estimate exceeds the
// GPU's memory cannot fit, and a sweep can drop it before simulating. A model of several modules,
// or one of per-sample data, is estimated from each stage's own steps and at least one
// microbatch's activations (none with per-sample data, whose shapes vary).
// `layer_steps`, if given, are the scenario's own (pipeline_layer_steps with the head sharing the
// embedding where the model ties them), computed once for many plans.
std::vector<Bytes> estimate_stage_memory(const TrainingScenario& scenario,
                                         const PipelineLayerSteps* layer_steps = nullptr);

}  // namespace weft
