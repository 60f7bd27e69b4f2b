#include "simulator/workload/training_sections.hpp"

#include <algorithm>
#include <array>
#include <string>
#include <utility>

#include "simulator/core/input_error.hpp"

namespace weft {
namespace {

int read_degree(const JsonCursor& parallel, const char* key, int fallback) {
  const auto value = parallel.find(key);
  if (!value) return fallback;
  const std::int64_t degree = value->as_positive_int();
  if (degree > (1 << 20)) value->fail("expected at most 1048576");
  return static_cast<int>(degree);
}

// {"first": N}, {"every": K} or {"uniform": N}: one key, a positive count.
LayerRecompute read_layer_recompute(const JsonCursor& json) {
  static constexpr std::array<std::pair<const char*, LayerRecompute::Method>, 3> kMethods{
      {{"first", LayerRecompute::Method::first},
       {"every", LayerRecompute::Method::every},
       {"uniform", LayerRecompute::Method::uniform}}};
  json.expect_only({"first", "every", "uniform"});
  const auto given = std::count_if(kMethods.begin(), kMethods.end(),
                                   [&](const auto& method) { return json.find(method.first).has_value(); });
  if (given != 1) {
    json.fail(
        "expected one of {\"first\": N} (the first N layers of each model chunk), {\"every\": K} (every "
        "K-th layer of each pipeline rank) or {\"uniform\": N} (every layer, in groups of N of each chunk)");
  }
  for (const auto& [key, method] : kMethods) {
    const auto count = json.find(key);
    if (!count) continue;
    const std::int64_t value = count->as_positive_int();
    if (value > 100'000) count->fail("expected at most 100000");
    return {.method = method, .count = static_cast<int>(value)};
  }
  return {};
}

}  // namespace

std::optional<int> node_shard_dp(int gpus_per_node, int tp, int cp) {
  const std::int64_t model_parallel = std::int64_t{tp} * cp;
  if (model_parallel > gpus_per_node || gpus_per_node % model_parallel != 0) return std::nullopt;
  return static_cast<int>(gpus_per_node / model_parallel);
}

ParallelPlan read_parallel(const JsonCursor& json, const ClusterSpec& cluster) {
  json.expect_only({"tp", "cp", "pp", "dp", "dp_shard", "vpp", "sequence_parallel", "zero", "schedule", "recompute",
                    "recompute_layers", "cp_algorithm", "cp_distribution", "stage_layers", "modality_stages", "modules",
                    "redundant_computation"});
  ParallelPlan plan;
  plan.tp = read_degree(json, "tp", 1);
  plan.cp = read_degree(json, "cp", 1);
  plan.pp = read_degree(json, "pp", 1);
  plan.vpp = read_degree(json, "vpp", 1);
  const std::int64_t model_parallel = std::int64_t{plan.tp} * plan.cp * plan.pp;
  if (json.find("dp")) {
    plan.dp = read_degree(json, "dp", 1);
  } else if (cluster.gpus % model_parallel == 0) {
    plan.dp = static_cast<int>(cluster.gpus / model_parallel);
  } else {
    json.fail("tp x cp x pp = " + std::to_string(model_parallel) + " does not divide the cluster's " +
              std::to_string(cluster.gpus) + " GPUs, so dp cannot be derived");
  }
  if (auto value = json.find("sequence_parallel")) plan.sequence_parallel = value->as_bool();
  if (auto value = json.find("redundant_computation")) plan.redundant_computation = value->as_bool();
  if (auto value = json.find("zero")) {
    const std::int64_t zero = value->as_nonnegative_int();
    if (zero > 3) {
      value->fail(
          "expected 0 (no sharding), 1 (distributed optimizer), 2 (gradients sharded too) or 3 (parameters "
          "too, gathered layer by layer as FSDP does)");
    }
    plan.zero = static_cast<int>(zero);
  }
  if (auto value = json.find("dp_shard"); value && value->is_string()) {
    if (value->as_string() != "node") value->fail("expected a number of data-parallel ranks or \"node\"");
    const std::optional<int> per_node = node_shard_dp(cluster.gpus_per_node, plan.tp, plan.cp);
    if (!per_node) {
      value->fail("a node's " + std::to_string(cluster.gpus_per_node) +
                  " GPUs hold no whole number of tp x cp = " + std::to_string(plan.tp * plan.cp) + " ranks");
    }
    plan.dp_shard = *per_node;
  } else {
    plan.dp_shard = read_degree(json, "dp_shard", 0);
  }
  if (auto value = json.find("schedule")) plan.schedule = value->as_enum(kPipelineScheduleNames);
  if (auto value = json.find("recompute")) plan.recompute = value->as_enum(kRecomputePolicyNames);
  if (auto value = json.find("recompute_layers")) plan.recompute_layers = read_layer_recompute(*value);
  if (auto value = json.find("cp_algorithm")) plan.cp_algorithm = value->as_enum(kContextParallelAlgorithmNames);
  if (auto value = json.find("cp_distribution")) plan.cp_distribution = value->as_enum(kTokenDistributionNames);
  if (auto value = json.find("stage_layers"); value && value->is_string()) {
    const std::string rule = value->as_string();
    if (rule == "parameters") {
      plan.partition = ParallelPlan::Partition::parameters;
    } else if (rule == "time") {
      plan.partition = ParallelPlan::Partition::time;
    } else if (rule == "modules") {
      plan.partition = ParallelPlan::Partition::modules;
    } else {
      value->fail("expected a list of layers per stage, \"parameters\", \"time\" or \"modules\"");
    }
  } else if (value) {
    for (const JsonCursor& layers : value->elements()) {
      const std::int64_t count = layers.as_nonnegative_int();
      if (count > 100'000) layers.fail("expected at most 100000");
      plan.stage_layers.push_back(static_cast<int>(count));
    }
  }
  return plan;
}

TrainingSpec read_training(const JsonCursor& json) {
  json.expect_only({"global_batch", "micro_batch", "seq_len", "images", "frames", "video_seconds", "audio_seconds",
                    "dtype", "optimizer", "attention_mask"});
  TrainingSpec training;
  training.global_batch = json.at("global_batch").as_positive_int();
  if (training.global_batch > kMaxGlobalBatch) {
    json.at("global_batch").fail("expected at most " + std::to_string(kMaxGlobalBatch) + " samples");
  }
  training.seq_len = json.at("seq_len").as_positive_int();
  if (training.seq_len > kMaxMicrobatchTokens) {
    json.at("seq_len").fail("expected at most " + std::to_string(kMaxMicrobatchTokens) + " tokens");
  }
  if (auto value = json.find("attention_mask")) {
    training.attention_mask = value->as_enum(kMaskPatternNames);
    if (training.seq_len < kMinMaskedTokens) {
      value->fail("a mask is drawn over sequences of " + std::to_string(kMinMaskedTokens) +
                  " tokens or more; training.seq_len is " + std::to_string(training.seq_len));
    }
  }
  if (auto value = json.find("micro_batch")) {
    training.micro_batch = value->as_positive_int();
    // Divided first: the product of two large values would overflow.
    if (training.micro_batch > kMaxMicrobatchTokens / training.seq_len) {
      value->fail(std::to_string(training.micro_batch) + " samples of " + std::to_string(training.seq_len) +
                  " tokens are more than " + std::to_string(kMaxMicrobatchTokens) + " tokens in a microbatch");
    }
  }
  if (auto value = json.find("images")) {
    training.images = value->as_nonnegative_int();
    if (training.images > 4096) value->fail("expected at most 4096 images per sample");
  }
  if (auto value = json.find("frames")) {
    training.frames = value->as_nonnegative_int();
    if (training.frames > training.images) {
      value->fail("expected at most training.images = " + std::to_string(training.images) +
                  " (the video frames among a sample's images)");
    }
  }
  for (auto [key, seconds] :
       {std::pair{"video_seconds", &training.video_seconds}, std::pair{"audio_seconds", &training.audio_seconds}}) {
    if (auto value = json.find(key)) {
      *seconds = value->as_nonnegative_number();
      if (*seconds > 3600.0) value->fail("expected at most 3600 seconds per sample");
    }
  }
  if (auto value = json.find("dtype")) {
    training.dtype = value->as_enum(kDtypeNames);
    if (training.dtype != Dtype::bf16 && training.dtype != Dtype::fp16 && training.dtype != Dtype::tf32) {
      value->fail("expected bf16 or fp16 (mixed precision) or tf32 (fp32 training on TF32 tensor cores)");
    }
  }
  if (auto value = json.find("optimizer"); value && value->as_string() != "adam") {
    value->fail("'" + value->as_string() + "' is not supported (expected adam)");
  }
  return training;
}

// `options` holds the stack's defaults; the scenario's fields replace them.
TrainingOptions read_options(const JsonCursor& json, TrainingOptions options) {
  json.expect_only({"framework_overhead_GiB", "ideal_network", "host_issue", "kernel_gap", "overlap_grad_reduce",
                    "overlap_param_gather", "dp_bucket_parameters", "collective_algorithm", "collective_contention"});
  if (auto value = json.find("framework_overhead_GiB")) {
    const double gib = value->as_nonnegative_number();
    if (gib > kMaxFrameworkOverheadGiB)
      value->fail("expected at most " + std::to_string(kMaxFrameworkOverheadGiB) + " GiB");
    options.framework_overhead = static_cast<Bytes>(gib * kBytesPerGiB);
  }
  if (auto value = json.find("ideal_network")) options.ideal_network = value->as_bool();
  if (auto value = json.find("host_issue")) options.host_issue = value->as_bool();
  if (auto value = json.find("kernel_gap")) options.kernel_gap = value->as_bool();
  if (auto value = json.find("overlap_grad_reduce")) options.overlap_grad_reduce = value->as_bool();
  if (auto value = json.find("overlap_param_gather")) options.overlap_param_gather = value->as_bool();
  if (auto value = json.find("collective_contention")) options.collective_contention = value->as_bool();
  if (auto value = json.find("dp_bucket_parameters")) options.dp_bucket_parameters = value->as_positive_int();
  if (auto value = json.find("collective_algorithm")) {
    options.collective_algorithm = value->as_enum(kCollectiveAlgorithmNames);
  }
  return options;
}

}  // namespace weft
