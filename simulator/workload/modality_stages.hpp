#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "simulator/core/json_cursor.hpp"
#include "simulator/workload/multimodal_spec.hpp"

namespace weft {

struct ParallelPlan;

// Modality parallelism (papers/004 §4.1): `parallel.modality_stages` gives each transformer
// module of a model of several modules pipeline stages of its own, so that encoders reading
// the sample's data run side by side on disjoint GPUs, each feeding the module that reads it.
// Projectors run on the last stage of the module they read. Every stage has the plan's TP, CP
// and DP; the stages are numbered module by module (stage_graph.hpp links them).

// Reads {"module name": stages, ...}: per module of `model`, its stages (0 for a projector).
// Errors name the key: an unknown module, a projector, a module left out, a count below one.
std::vector<int> read_modality_stages(const JsonCursor& json, const MultimodalSpec& model);

// The index of the transformer module of `model` named `name`, a key of an object whose value is
// `value`; fails at `value` for an unknown module or a projector (`projector_note` ends that message).
std::size_t transformer_module_named(const JsonCursor& value, const MultimodalSpec& model, const std::string& name,
                                     std::string_view projector_note);

// Checks a plan with modality stages (InvalidPlan naming the field): schedule gpipe or 1f1b
// with vpp = 1; the stages add up to pp; no module has more stages than layers; given
// stage_layers keep each stage within one module; every projector is listed right after the
// module it reads; every module but the last is read by exactly one later module.
void check_modality_plan(const ParallelPlan& plan, const MultimodalSpec& model);

// (module name, stages) of each transformer module, in the model's order; empty without
// modality parallelism.
std::vector<std::pair<std::string, int>> named_modality_stages(const MultimodalSpec& model,
                                                               std::span<const int> module_stages);

// The layers of each stage, module by module, balancing `layer_weights` (one per pipeline
// layer) within each module over its stages.
std::vector<int> partition_within_modules(std::span<const std::int64_t> layer_weights, const MultimodalSpec& model,
                                          std::span<const int> module_stages);

}  // namespace weft
