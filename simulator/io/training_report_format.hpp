#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "simulator/workload/training_report.hpp"

namespace weft {

// The report `weft simulate` prints for a training scenario.
std::string render_training_report(const TrainingScenario& scenario, const TrainingReport& report);

// The cluster's GPU types as reports name them: "h100-sxm", or with node groups of other types
// "h100-sxm; nodes 32-63 a100-sxm-80gb".
std::string cluster_gpus_text(const ClusterSpec& cluster);

// The same for machines (`--json`): iteration_time_s, tokens_per_s, samples_per_s, mfu,
// tflops_per_gpu, model_flops_per_iteration, oom, and per stage compute_s, exposed_comm_s by
// group, bubble_s, peak_memory_bytes and its breakdown.
nlohmann::json training_report_json(const TrainingScenario& scenario, const TrainingReport& report);

// How weft counts model FLOPs; printed with every MFU.
inline constexpr const char* kFlopsConvention =
    "Megatron-LM convention: matrix multiplications only, backward = 2x forward (frozen modules: 1x when "
    "a trainable module lies upstream, else 0), attention over the full s x s (causal masking not halved), "
    "recomputation not counted";

}  // namespace weft
