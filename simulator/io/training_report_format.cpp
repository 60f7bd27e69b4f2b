#include "simulator/io/training_report_format.hpp"

#include <algorithm>
#include <numeric>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "simulator/core/format_units.hpp"
#include "simulator/io/text_table.hpp"
#include "simulator/workload/modality_stages.hpp"
#include "simulator/workload/module_meshes.hpp"

namespace weft {
namespace {

// {"module": stages, ...} under modality parallelism, else null.
nlohmann::json modality_stages_json(const TrainingScenario& s) {
  nlohmann::json stages;
  for (const auto& [name, count] : named_modality_stages(s.model, s.parallel.modality_stages)) stages[name] = count;
  return stages;
}

// Per module on a mesh of its own (parallel.modules): its TP, DP, stages and GPUs.
nlohmann::json module_meshes_json(const TrainingScenario& s) {
  const ParallelPlan& p = s.parallel;
  nlohmann::json meshes = nlohmann::json::object();
  if (!p.per_module_meshes()) return meshes;
  for (std::size_t m = 0; m < p.modality_stages.size(); ++m) {
    const int stages = p.modality_stages[m];
    if (stages == 0) continue;
    const PositionMesh mesh = p.module_meshes[m];
    meshes[s.model.modules[m].name] = {{"tp", mesh.tp},
                                       {"dp", mesh.dp},
                                       {"stages", stages},
                                       {"gpus", std::int64_t{stages} * mesh.tp * p.cp * mesh.dp}};
  }
  return meshes;
}

// As the scenario gives it: {"first": N} or {"every": K}, or "all".
nlohmann::json layer_recompute_json(const LayerRecompute& pick) {
  switch (pick.method) {
    case LayerRecompute::Method::first:
      return {{"first", pick.count}};
    case LayerRecompute::Method::every:
      return {{"every", pick.count}};
    case LayerRecompute::Method::uniform:
      return {{"uniform", pick.count}};
    case LayerRecompute::Method::all:
      break;
  }
  return "all";
}

std::string describe_plan(const TrainingScenario& s) {
  const ParallelPlan& p = s.parallel;
  std::string plan = fmt::format("tp {}, cp {}, pp {}, dp {}", p.tp, p.cp, p.pp, p.dp);
  if (p.vpp > 1) plan += fmt::format(", vpp {}", p.vpp);
  if (p.sequence_parallel && p.tp > 1) plan += ", sequence parallel";
  if (p.zero >= 1) plan += fmt::format(", ZeRO-{}", p.zero);
  if (p.hybrid_sharding()) {
    plan += fmt::format(" hybrid (sharded over {} DP ranks, {} replicas)", p.shard_dp(), p.shard_replicas());
  }
  plan += fmt::format(", schedule {}, recompute {}", kPipelineScheduleNames.name(p.schedule),
                      kRecomputePolicyNames.name(p.recompute));
  if (p.recompute_layers.method != LayerRecompute::Method::all) plan += " (" + describe(p.recompute_layers) + ")";
  if (p.redundant_computation) plan += ", redundant computation (Bamboo)";
  if (p.cp > 1) plan += fmt::format(", cp {}", kContextParallelAlgorithmNames.name(p.cp_algorithm));
  if (s.training.attention_mask || p.cp_distribution) {
    plan += fmt::format(", attention mask {}, tokens dealt {}",
                        kMaskPatternNames.name(s.training.attention_mask.value_or(MaskPattern::causal)),
                        kTokenDistributionNames.name(p.cp_distribution.value_or(TokenDistribution::zigzag)));
  }
  std::vector<std::string> modality;
  for (const auto& [name, stages] : named_modality_stages(s.model, p.modality_stages))
    modality.push_back(fmt::format("{} {}", name, stages));
  if (!modality.empty()) plan += fmt::format(", modality stages {}", fmt::join(modality, "/"));
  if (p.per_module_meshes()) plan += ", module meshes (" + describe_module_meshes(s) + ")";
  if (!p.stage_layers.empty()) {
    const char* rule = p.partition == ParallelPlan::Partition::parameters ? " (balanced parameters)"
                       : p.partition == ParallelPlan::Partition::time     ? " (balanced compute time)"
                       : p.partition == ParallelPlan::Partition::modules  ? " (balanced parameters per chunk)"
                                                                          : "";
    plan += fmt::format(", stage layers {}{}", fmt::join(p.stage_layers, "/"), rule);
  }
  return plan;
}

// Which modules' layers pipeline position `position` holds, chunk by chunk: "vision 0-45" or
// "vision 46-62, language 0-5" (layers numbered within each module), chunks apart by " | ".
std::string stage_modules(const TrainingScenario& s, int position) {
  const std::vector<int> layers = s.layers_per_virtual_stage();
  std::vector<std::string> chunks;
  for (int chunk = 0; chunk < s.parallel.vpp; ++chunk) {
    const int group = chunk * s.parallel.pp + position;
    const int first = std::accumulate(layers.begin(), layers.begin() + group, 0);
    const int end = first + layers[static_cast<std::size_t>(group)];
    std::vector<std::string> parts;
    for (std::size_t m = 0; m < s.model.modules.size(); ++m) {
      const int begin = s.model.first_layer(m);
      const int from = std::max(first, begin);
      const int to = std::min(end, begin + s.model.modules[m].layers());
      if (from + 1 == to) parts.push_back(fmt::format("{} {}", s.model.modules[m].name, from - begin));
      if (from + 1 < to)
        parts.push_back(fmt::format("{} {}-{}", s.model.modules[m].name, from - begin, to - 1 - begin));
    }
    chunks.push_back(parts.empty() ? "-" : fmt::format("{}", fmt::join(parts, ", ")));
  }
  return fmt::format("{}", fmt::join(chunks, " | "));
}

// The stack's framework time per layer, which the stages' compute column includes.
std::string render_framework(const TrainingScenario& s, const TrainingReport& r) {
  double most = 0.0;
  for (const StageReport& stage : r.stages) most = std::max(most, stage.framework_s);
  return fmt::format("Framework        {} a layer pass ({} stack), in the stages' compute: {} at most\n",
                     format_duration(s.stack.layer_framework_ns), s.stack.name, format_seconds(most));
}

std::string render_stages(const TrainingScenario& s, const TrainingReport& report) {
  TextTable table;
  const bool modules = s.model.multimodal();
  for (const char* header : {"stage", "holds", "compute", "tp comm", "cp comm", "pp comm", "dp comm", "bubble",
                             "peak memory", "params", "grads", "optimizer", "activations", "overhead", "oom"}) {
    const std::string_view name = header;
    if (name == "holds" && !modules) continue;
    const bool left = name == "stage" || name == "holds" || name == "oom";
    table.add_column(header, left ? TextTable::Align::left : TextTable::Align::right);
  }
  for (const StageReport& stage : report.stages) {
    auto comm = [&](CommGroupKind kind) {
      return format_seconds(stage.exposed_comm_s[static_cast<std::size_t>(kind)]);
    };
    std::string pp = comm(CommGroupKind::pp);
    const double embedding = stage.exposed_comm_s[static_cast<std::size_t>(CommGroupKind::embedding)];
    std::string dp = format_seconds(stage.exposed_comm_s[static_cast<std::size_t>(CommGroupKind::dp)] + embedding);
    std::vector<std::string> row = {std::to_string(stage.stage),
                                    format_seconds(stage.compute_s),
                                    comm(CommGroupKind::tp),
                                    comm(CommGroupKind::cp),
                                    pp,
                                    dp,
                                    format_seconds(stage.bubble_s),
                                    format_bytes(stage.peak_memory),
                                    format_bytes(stage.static_memory.parameters),
                                    format_bytes(stage.static_memory.gradients),
                                    format_bytes(stage.static_memory.optimizer_states),
                                    format_bytes(stage.activation_peak),
                                    format_bytes(stage.static_memory.framework_overhead),
                                    stage.oom ? "OOM" : "no"};
    if (modules) row.insert(row.begin() + 1, stage_modules(s, stage.stage));
    table.add_row(row);
  }
  return table.render("  ");
}

std::string billions(std::int64_t parameters) { return fmt::format("{:.2f} B", static_cast<double>(parameters) / 1e9); }

// "llama3-8b: 8.03 B parameters, 32 layers, hidden 4096", or for several modules their layers
// and which are frozen.
std::string describe_model(const MultimodalSpec& model, const TrainingReport& r) {
  if (!model.multimodal()) {
    return fmt::format("{}: {} parameters, {} layers, hidden {}", model.name, billions(r.parameters),
                       model.single().layers, model.single().hidden);
  }
  std::vector<std::string> modules;
  for (const ModuleSpec& module : model.modules) {
    std::string text = module.name;
    if (!module.projector) text += fmt::format(" ({} x {})", module.model.name, module.model.layers);
    if (module.frozen) text += " frozen";
    modules.push_back(std::move(text));
  }
  return fmt::format("{}: {} parameters ({} trainable), {} layers: {}", model.name, billions(r.parameters),
                     billions(r.trainable_parameters), model.layers(), fmt::join(modules, ", "));
}

// "8192 tokens", "8192 tokens and 8 images", ...
// " and 10 images (6 of them video frames)", or nothing without images.
std::string describe_images(std::int64_t images, std::int64_t frames) {
  if (images == 0) return {};
  return fmt::format(" and {} images{}", images, frames > 0 ? fmt::format(" ({} of them video frames)", frames) : "");
}

std::string describe_sample(const TrainingSpec& t) {
  std::string text = fmt::format("{} tokens", t.seq_len) + describe_images(t.images, t.frames);
  if (t.video_seconds > 0.0) text += fmt::format(" and {:g} s of video", t.video_seconds);
  if (t.audio_seconds > 0.0) text += fmt::format(" and {:g} s of audio", t.audio_seconds);
  return text;
}

// "Stragglers  3 slow GPUs, 1 slow NIC; ..." (docs/stragglers.md).
std::string render_stragglers(const StragglerSummary& st, double iteration_time_s) {
  std::string out = fmt::format("Stragglers       {} slow GPU{}, {} slow NIC{}", st.slow_gpus,
                                st.slow_gpus == 1 ? "" : "s", st.slow_nics, st.slow_nics == 1 ? "" : "s");
  if (st.slow_nvlinks > 0) out += fmt::format(", {} slow NVLink{}", st.slow_nvlinks, st.slow_nvlinks == 1 ? "" : "s");
  if (st.gpu >= 0) {
    out += fmt::format("; the iteration waits for GPU {} at {} speed ({})", st.gpu, format_percent(st.speed),
                       st.rank_label);
  }
  if (st.nic_node >= 0) out += fmt::format("; slowest NICs: node {} at {}", st.nic_node, format_percent(st.nic_speed));
  if (st.nvlink_node >= 0) {
    out += fmt::format("; slowest NVLink: node {} at {}", st.nvlink_node, format_percent(st.nvlink_speed));
  }
  out += "\n";
  if (st.healthy_iteration_time_s) {
    const double healthy = *st.healthy_iteration_time_s;
    out += fmt::format("                 {} slower than the same plan on healthy parts ({})\n",
                       format_percent(iteration_time_s / healthy - 1.0), format_seconds(healthy));
  }
  return out;
}

}  // namespace

std::string render_training_report(const TrainingScenario& s, const TrainingReport& r) {
  std::string out;
  out += "Model    " + describe_model(s.model, r) + "\n";
  out += fmt::format("Cluster  {}: {} GPUs ({}), {} per node\n", s.cluster.name, r.gpus, cluster_gpus_text(s.cluster),
                     s.cluster.gpus_per_node);
  out += fmt::format("Plan     {}\n", describe_plan(s));
  const bool packed = s.data && s.data->pack;
  out += fmt::format("Batch    {} {} of {}{}: {} microbatches of {} per pipeline\n", s.training.global_batch,
                     packed ? "packed sequences" : "samples", s.data ? "up to " : "", describe_sample(s.training),
                     r.microbatches, s.training.micro_batch);
  if (r.data) {
    const DataSummary& d = *r.data;
    std::string media = describe_images(d.images, d.frames);
    if (!media.empty()) media.replace(0, 4, ",");
    if (d.video_seconds > 0.0) media += fmt::format(", {:g} s of video", d.video_seconds);
    if (d.audio_seconds > 0.0) media += fmt::format(", {:g} s of audio", d.audio_seconds);
    out += fmt::format(
        "Data     {}{}: {} samples{}, {} tokens in samples, {} padded ({:.1f}% padding); {} to {} tokens per {} "
        "in a microbatch, {} microbatch shapes\n",
        d.dataset, d.packed ? " (packed)" : "", d.samples, media, d.sample_tokens, d.padded_tokens,
        100.0 * static_cast<double>(d.padded_tokens - d.sample_tokens) / static_cast<double>(d.padded_tokens),
        d.shortest_microbatch, d.longest_microbatch, d.packed ? "sequence" : "sample", d.distinct_shapes);
  }
  const char* folding = !r.folded ? "unfolded: every rank"
                        : r.per_replica
                            ? (r.data ? "one per pipeline stage of each DP replica"
                                      : "one per pipeline stage of each DP replica that stragglers set apart")
                            : "folded: one per pipeline stage";
  out += fmt::format("Graph    {} simulated ranks ({}), {} ops\n\n", r.simulated_ranks, folding, r.simulated_ops);
  out += fmt::format("Iteration time   {}\n", format_seconds(r.iteration_time_s));
  out += fmt::format("Throughput       {:.0f} tokens/s, {:.2f} samples/s\n", r.tokens_per_s, r.samples_per_s);
  out += fmt::format("Per GPU          {:.1f} TFLOP/s, MFU {} of {:.1f} TFLOP/s {} dense peak{}\n", r.tflops_per_gpu,
                     format_percent(r.mfu), r.peak_tflops, kDtypeNames.name(s.training.dtype),
                     s.cluster.node_groups.empty() ? "" : " (the mean of the cluster's GPUs)");
  out += fmt::format("Model FLOPs      {:.4g} per iteration ({})\n", r.model_flops_per_iteration, kFlopsConvention);
  out += fmt::format("Memory           {}\n", r.oom ? "OUT OF MEMORY on at least one stage" : "fits on every stage");
  if (s.stack.layer_framework_ns > 0) out += render_framework(s, r);
  if (r.stragglers) out += render_stragglers(*r.stragglers, r.iteration_time_s);
  out += "\n";
  out +=
      "Per pipeline stage (exposed communication is what no compute overlaps; peak memory is\n"
      "parameters + gradients + optimizer states + activations and buffers at the peak + overhead)\n";
  out += render_stages(s, r);
  return out;
}

std::string cluster_gpus_text(const ClusterSpec& cluster) {
  std::string text = cluster.gpu.name;
  for (const NodeGroup& group : cluster.node_groups) {
    text += fmt::format("; nodes {}-{} {}", group.first_node, group.first_node + group.nodes - 1, group.gpu.name);
  }
  return text;
}

nlohmann::json training_report_json(const TrainingScenario& s, const TrainingReport& r) {
  nlohmann::json stages = nlohmann::json::array();
  for (const StageReport& stage : r.stages) {
    nlohmann::json exposed = nlohmann::json::object();
    for (std::size_t k = 0; k < kCommGroupKindCount; ++k) {
      exposed[std::string(kCommGroupKindNames.name(static_cast<CommGroupKind>(k)))] = stage.exposed_comm_s[k];
    }
    stages.push_back({{"stage", stage.stage},
                      {"rank", stage.rank_label},
                      {"compute_s", stage.compute_s},
                      {"framework_s", stage.framework_s},
                      {"exposed_comm_s", std::move(exposed)},
                      {"bubble_s", stage.bubble_s},
                      {"peak_memory_bytes", stage.peak_memory},
                      {"memory_capacity_bytes", stage.memory_capacity},
                      {"memory_breakdown_bytes",
                       {{"parameters", stage.static_memory.parameters},
                        {"gradients", stage.static_memory.gradients},
                        {"optimizer_states", stage.static_memory.optimizer_states},
                        {"activations_and_buffers", stage.activation_peak},
                        {"framework_overhead", stage.static_memory.framework_overhead}}},
                      {"oom", stage.oom},
                      {"speed", stage.speed}});
  }
  const ParallelPlan& p = s.parallel;
  nlohmann::json json = {{"model", s.model.name},
                         {"parameters", r.parameters},
                         {"trainable_parameters", r.trainable_parameters},
                         {"cluster", s.cluster.name},
                         {"gpus", r.gpus},
                         {"parallel",
                          {{"tp", p.tp},
                           {"cp", p.cp},
                           {"pp", p.pp},
                           {"dp", p.dp},
                           {"vpp", p.vpp},
                           {"sequence_parallel", p.sequence_parallel},
                           {"zero", p.zero},
                           {"dp_shard", p.shard_dp()},
                           {"schedule", kPipelineScheduleNames.name(p.schedule)},
                           {"recompute", kRecomputePolicyNames.name(p.recompute)},
                           {"recompute_layers", layer_recompute_json(p.recompute_layers)},
                           {"redundant_computation", p.redundant_computation},
                           {"stage_layers", s.layers_per_virtual_stage()},
                           {"modality_stages", modality_stages_json(s)},
                           {"module_meshes", module_meshes_json(s)}}},
                         {"microbatches", r.microbatches},
                         {"iteration_time_s", r.iteration_time_s},
                         {"tokens_per_s", r.tokens_per_s},
                         {"samples_per_s", r.samples_per_s},
                         {"model_flops_per_iteration", r.model_flops_per_iteration},
                         {"flops_convention", kFlopsConvention},
                         {"tflops_per_gpu", r.tflops_per_gpu},
                         {"mfu", r.mfu},
                         {"oom", r.oom},
                         {"folded", r.folded},
                         {"per_replica", r.per_replica},
                         {"simulated_ops", r.simulated_ops},
                         {"stages", std::move(stages)}};
  if (s.model.multimodal()) {
    nlohmann::json modules = nlohmann::json::array();
    for (const ModuleSpec& module : s.model.modules) {
      modules.push_back({{"name", module.name},
                         {"model", module.projector ? "projector" : module.model.name},
                         {"layers", module.layers()},
                         {"frozen", module.frozen}});
    }
    json["modules"] = std::move(modules);
  }
  if (const auto& st = r.stragglers) {
    json["stragglers"] = {
        {"slow_gpus", st->slow_gpus},
        {"slow_nics", st->slow_nics},
        {"gpu", st->gpu >= 0 ? nlohmann::json(st->gpu) : nlohmann::json()},
        {"speed", st->speed},
        {"rank", st->rank_label},
        {"nic_node", st->nic_node >= 0 ? nlohmann::json(st->nic_node) : nlohmann::json()},
        {"nic_speed", st->nic_speed},
        {"slow_nvlinks", st->slow_nvlinks},
        {"nvlink_node", st->nvlink_node >= 0 ? nlohmann::json(st->nvlink_node) : nlohmann::json()},
        {"nvlink_speed", st->nvlink_speed},
        {"healthy_iteration_time_s",
         st->healthy_iteration_time_s ? nlohmann::json(*st->healthy_iteration_time_s) : nlohmann::json()}};
  }
  if (r.data) {
    json["data"] = {{"dataset", r.data->dataset},
                    {"packed", r.data->packed},
                    {"samples", r.data->samples},
                    {"images", r.data->images},
                    {"frames", r.data->frames},
                    {"video_seconds", r.data->video_seconds},
                    {"audio_seconds", r.data->audio_seconds},
                    {"sample_tokens", r.data->sample_tokens},
                    {"padded_tokens", r.data->padded_tokens},
                    {"shortest_microbatch_tokens", r.data->shortest_microbatch},
                    {"longest_microbatch_tokens", r.data->longest_microbatch},
                    {"distinct_shapes", r.data->distinct_shapes}};
  }
  return json;
}

}  // namespace weft
