#pragma once

#include <array>
#include <optional>
#include <string>
#include <vector>

#include "simulator/engine/simulation_result.hpp"
#include "simulator/workload/training_workload.hpp"

namespace weft {

// Where one rank's iteration time goes: compute (any compute op running), communication no
// compute hides (split evenly among the groups running at that moment), and bubble (idle).
struct StageReport {
  int stage = 0;
  std::string rank_label;
  double compute_s = 0.0;
  double framework_s = 0.0;  // of compute_s: the stack's framework time per layer (docs/stacks.md)
  std::array<double, kCommGroupKindCount> exposed_comm_s{};
  double bubble_s = 0.0;
  Bytes peak_memory = 0;
  StaticMemory static_memory;
  Bytes activation_peak = 0;  // peak minus what is held all iteration
  Bytes memory_capacity = 0;
  bool oom = false;    // any simulated rank of the stage
  double speed = 1.0;  // of the slowest GPU its busiest rank stands for (docs/stragglers.md)
};

// The cluster's stragglers, and the one the iteration waits for (docs/stragglers.md).
struct StragglerSummary {
  std::size_t slow_gpus = 0;  // in the cluster
  std::size_t slow_nics = 0;
  std::int64_t gpu = -1;  // the slowest GPU among those the plan's simulated ranks stand for
  double speed = 1.0;
  std::string rank_label;      // the simulated rank it paces
  std::int64_t nic_node = -1;  // the node of the slowest NIC
  double nic_speed = 1.0;
  std::size_t slow_nvlinks = 0;
  std::int64_t nvlink_node = -1;  // the node of the slowest NVLink
  double nvlink_speed = 1.0;
  std::optional<double> healthy_iteration_time_s;  // the same plan with every part at full speed
};

// What per-sample data made of the batch.
struct DataSummary {
  std::string dataset;
  bool packed = false;
  std::int64_t samples = 0;              // taken this iteration (several per packed sequence)
  std::int64_t sample_tokens = 0;        // sequence tokens before padding
  std::int64_t padded_tokens = 0;        // as simulated
  std::int64_t shortest_microbatch = 0;  // sequence tokens per sample (or packed sequence)
  std::int64_t longest_microbatch = 0;
  std::int64_t images = 0;
  std::int64_t frames = 0;  // of the images, video frames
  double video_seconds = 0.0;
  double audio_seconds = 0.0;
  std::size_t distinct_shapes = 0;  // microbatch shapes: sequence length, images, video, audio
};

struct TrainingReport {
  double iteration_time_s = 0.0;
  double tokens_per_s = 0.0;  // the samples' own tokens, padding excluded
  double samples_per_s = 0.0;
  double model_flops_per_iteration = 0.0;
  double tflops_per_gpu = 0.0;
  double mfu = 0.0;  // of the GPU's dense peak in the training dtype
  double peak_tflops = 0.0;
  std::int64_t gpus = 0;
  std::int64_t parameters = 0;
  std::int64_t trainable_parameters = 0;
  std::int64_t microbatches = 0;
  std::size_t simulated_ranks = 0;
  std::size_t simulated_ops = 0;
  bool folded = true;
  bool per_replica = false;
  std::optional<DataSummary> data;
  bool oom = false;
  std::vector<StageReport> stages;
  std::optional<StragglerSummary> stragglers;  // when the cluster lists any
};

TrainingReport make_training_report(const TrainingScenario& scenario, const TrainingWorkload& workload,
                                    const SimulationResult& result);

// Tokens an iteration of uniform batches trains (no per-sample data): the global batch's tokens of
// the module with the loss. A report's tokens/s is this over its iteration time in seconds.
double uniform_iteration_tokens(const TrainingScenario& scenario);

}  // namespace weft
