#include "simulator/workload/training_scenario.hpp"

#include <algorithm>
#include <limits>
#include <numeric>
#include <span>

#include <fmt/format.h>

#include "simulator/core/checked_math.hpp"
#include "simulator/core/input_error.hpp"
#include "simulator/workload/modality_stages.hpp"
#include "simulator/workload/module_meshes.hpp"
#include "simulator/workload/stage_partition.hpp"
#include "simulator/workload/training_sections.hpp"

namespace weft {
namespace {

[[noreturn]] void reject(const std::string& path, const char* rule, const std::string& message) {
  throw InvalidPlan(path + ": " + message, rule);
}

std::string str(std::int64_t value) { return std::to_string(value); }

// Images, video and audio vary per sample: such a microbatch is one sample or one packed sequence.
bool has_media_modules(const MultimodalSpec& model) {
  return std::any_of(model.modules.begin(), model.modules.end(),
                     [](const ModuleSpec& m) { return m.tokens != TokenSource::text; });
}

// Bamboo runs DeepSpeed's 1F1B over a chain of stages, each backing up the next one's layers.
void validate_redundant_computation(const TrainingScenario& s) {
  const ParallelPlan& p = s.parallel;
  const std::string path = "parallel.redundant_computation";
  if (p.pp < 2) reject(path, "redundant computation needs pp >= 2", "each stage backs up the next: set pp >= 2");
  if (p.schedule != PipelineSchedule::one_f_one_b) {
    reject(path, "redundant computation needs 1f1b",
           "Bamboo runs the 1F1B schedule, its redundant forwards in the bubbles before each backward: set schedule "
           "to '1f1b'");
  }
  if (s.model.multimodal()) {
    reject(path, "redundant computation with several modules",
           "weft backs up the stages of a model of one module only (model '" + s.model.name + "')");
  }
  if (p.zero >= 3) {
    reject(path, "redundant computation with zero 3",
           "a backup stage holds its successor's parameters whole, not gathered layer by layer: set zero to 0, 1 or 2");
  }
}

// Picking layers is for full recompute of a model of one module, whose layers the pipeline's
// chunks hold in order.
void validate_layer_recompute(const TrainingScenario& s) {
  const std::string path = "parallel.recompute_layers";
  if (s.parallel.recompute != RecomputePolicy::full) {
    reject(path, "recompute_layers without full recompute",
           "picks the layers that full recompute checkpoints: set parallel.recompute to 'full' (it is '" +
               std::string(kRecomputePolicyNames.name(s.parallel.recompute)) + "')");
  }
  if (s.model.multimodal()) {
    reject(path, "recompute_layers with several modules",
           "weft picks recomputed layers in a model of one module only (model '" + s.model.name + "')");
  }
  if (s.parallel.recompute_layers.method == LayerRecompute::Method::uniform && s.parallel.zero >= 3) {
    reject(path, "uniform recompute groups with zero 3",
           "ZeRO-3 gathers one layer's parameters at a time, and a group of layers is recomputed at once: set zero to "
           "0, 1 or 2, or recompute layer by layer");
  }
}

// Hybrid sharding splits the data-parallel ranks into equal shard groups, and shards only what
// ZeRO shards.
void validate_hybrid_sharding(const TrainingScenario& s) {
  const ParallelPlan& p = s.parallel;
  const std::string path = "parallel.dp_shard";
  if (p.zero < 1) {
    reject(path, "dp_shard without zero",
           "names the data-parallel ranks ZeRO shards over: set parallel.zero to 1, 2 or 3 (it is 0)");
  }
  if (p.dp % p.dp_shard != 0) {
    reject(path, "dp_shard does not divide dp",
           "shard groups of " + std::to_string(p.dp_shard) + " ranks do not divide dp = " + std::to_string(p.dp));
  }
  if (p.zero_shards() == 1 && p.hybrid_sharding()) {
    reject(path, "a shard group of one rank",
           "dp_shard 1 (with cp 1) shards nothing: set parallel.zero to 0 for plain data parallelism");
  }
  // The simulation joins the collectives of simulated replicas as one data-parallel group.
  if (p.hybrid_sharding() && s.data) {
    reject(path, "hybrid sharding with per-sample data",
           "hybrid sharding is simulated with one replica of each stage, and per-sample data simulates every "
           "replica: leave out dp_shard or the data section");
  }
  if (p.hybrid_sharding() && s.cluster.stragglers) {
    reject(path, "hybrid sharding with stragglers",
           "hybrid sharding is simulated with one replica of each stage, and stragglers may set replicas apart: "
           "leave out dp_shard or the cluster's stragglers");
  }
}

// A samples file holds the whole batch, and every padded length (a multiple of pad_to up to
// seq_len) splits as seq_len must.
void validate_data(const TrainingScenario& s) {
  const std::int64_t samples = static_cast<std::int64_t>(s.data->samples.size());
  if ((s.data->pack || has_media_modules(s.model)) && s.training.micro_batch != 1) {
    reject("training.micro_batch", "per-sample media or packing with micro_batch > 1",
           "with packing, or samples of images, video or audio, a microbatch is one sample or one packed sequence: "
           "set micro_batch to 1");
  }
  if (samples > 0 && !s.data->pack && samples < s.training.global_batch) {
    reject("data.samples", "too few samples",
           s.data->samples_file + " holds " + str(samples) + " samples; the global batch takes " +
               str(s.training.global_batch));
  }
  const std::int64_t pad = s.data->pad_to;
  const ParallelPlan& p = s.parallel;
  if (s.training.seq_len % pad != 0) {
    reject("data.pad_to", "seq_len not a multiple of pad_to",
           str(pad) + " does not divide training.seq_len " + str(s.training.seq_len));
  }
  if (p.cp > 1 && pad % (2 * p.cp) != 0) {
    reject("data.pad_to", "pad_to not divisible by 2 x cp",
           str(pad) + " is not divisible by 2 x cp = " + str(2 * p.cp) + " (load-balanced context parallelism)");
  }
  if (p.sequence_parallel && p.tp > 1 && (s.training.micro_batch * pad / p.cp) % p.tp != 0) {
    reject("data.pad_to", "padded tokens not divisible by tp",
           "micro_batch x pad_to / cp = " + str(s.training.micro_batch * pad / p.cp) +
               " tokens do not split over tp = " + str(p.tp) + " (sequence parallelism)");
  }
}

// A model with fused attention trains in fp32 or tf32 only on a stack whose attention kernel takes it.
void check_attention_dtype(const JsonCursor& root, const TrainingScenario& s) {
  const auto& modules = s.model.modules;
  if (std::none_of(modules.begin(), modules.end(),
                   [](const ModuleSpec& m) { return !m.projector && m.model.attention == AttentionKernel::flash; })) {
    return;
  }
  std::vector<const DeviceSpec*> gpus = {&s.cluster.gpu};
  for (const NodeGroup& group : s.cluster.node_groups) gpus.push_back(&group.gpu);
  for (const DeviceSpec* gpu : gpus) {
    if (const auto conflict = attention_dtype_conflict(s.stack, *gpu, s.training.dtype)) {
      root.at("training").at("dtype").fail(*conflict);
    }
  }
}

TrainingScenario load_scenario_without_plan(const JsonCursor& root) {
  root.expect_only({"description", "model", "cluster", "stack", "parallel", "training", "options", "data"});
  TrainingScenario scenario;
  if (auto value = root.find("description")) scenario.description = value->as_string();
  scenario.model = load_multimodal_spec(root.at("model"));
  scenario.cluster = load_cluster_spec(root.at("cluster"));
  const nlohmann::json default_stack(kDefaultStack);
  scenario.stack = load_software_stack(root.find("stack") ? root.at("stack") : JsonCursor(default_stack, "stack"));
  scenario.training = read_training(root.at("training"));
  check_attention_dtype(root, scenario);
  scenario.options.overlap_grad_reduce = scenario.stack.overlap_grad_reduce;
  scenario.options.overlap_param_gather = scenario.stack.overlap_param_gather;
  scenario.options.framework_overhead = scenario.stack.cuda_context;
  if (auto value = root.find("options")) scenario.options = read_options(*value, scenario.options);
  return scenario;
}

// The tokens `module` sees in a microbatch of `sample`s against the plan: few enough, split over
// tp with sequence parallelism, within learned positions. `drawn` describes a microbatch drawn from
// per-sample data (empty for the training section's sample).
void check_module_tokens(const TrainingScenario& s, std::size_t index, const SampleShape& sample,
                         const std::string& drawn) {
  const ParallelPlan& p = s.parallel;
  const ModuleSpec& module = s.model.modules[index];
  const std::string who =
      (drawn.empty() ? "" : drawn + " gives ") + (s.model.multimodal() ? "module '" + module.name + "': " : "");
  ShardContext base;
  base.tp = p.tp;
  base.cp = p.cp;
  base.micro_batch = s.training.micro_batch;
  const ModuleShard shard = module_shard(s, index, base, sample);
  const ShardContext context = module_context(module, shard.context, shard.sample);
  const int tp = shard.context.tp;
  if (context.micro_batch * context.seq_len > kMaxMicrobatchTokens) {
    reject(drawn.empty() ? "training" : "data", "too many tokens in a microbatch",
           who + str(context.micro_batch * context.seq_len) + " tokens in a microbatch, more than " +
               str(kMaxMicrobatchTokens));
  }
  if (p.sequence_parallel && context.tokens() % tp != 0) {
    reject(drawn.empty() ? "parallel.sequence_parallel" : "data", "sequence-parallel tokens not divisible by tp",
           who + "the " + str(context.tokens()) +
               " tokens of a microbatch per CP rank do not split over tp = " + str(tp) + " (sequence parallelism)");
  }
  if (!module.projector && module.model.position == PositionEncoding::learned &&
      context.seq_len > module.model.max_positions) {
    reject(drawn.empty() ? "training.seq_len" : "data", "sequence longer than the model's positions",
           who + str(context.seq_len) + " exceeds the model's " + str(module.model.max_positions) + " positions");
  }
}

// A module's shapes against the plan and the samples it sees; messages name the module of a
// multimodal model.
void validate_module(const TrainingScenario& s, std::size_t index) {
  const ParallelPlan& p = s.parallel;
  const TrainingSpec& t = s.training;
  const ModuleSpec& module = s.model.modules[index];
  const std::string who = s.model.multimodal() ? "module '" + module.name + "': " : "";
  // A module on a mesh of its own (parallel.modules) has its own TP; a projector its reader's.
  const int tp = p.per_module_meshes() ? p.module_meshes[index].tp : p.tp;
  const std::size_t meshed = module.projector ? module.inputs.front() : index;
  const std::string tp_path = p.per_module_meshes() && meshed + 1 < s.model.modules.size()
                                  ? "parallel.modules." + s.model.modules[meshed].name + ".tp"
                                  : "parallel.tp";
  if (module.projector) {
    if (module.projector->ffn_hidden % tp != 0)
      reject(tp_path, "tp does not divide ffn_hidden",
             who + str(tp) + " does not divide ffn_hidden " + str(module.projector->ffn_hidden));
  } else {
    const ModelSpec& m = module.model;
    if (m.heads % tp != 0)
      reject(tp_path, "tp does not divide attention heads",
             who + str(tp) + " does not divide attention heads " + str(m.heads));
    if (m.kv_heads % tp != 0)
      reject(tp_path, "tp does not divide KV heads", who + str(tp) + " does not divide KV groups " + str(m.kv_heads));
    if (m.ffn_hidden % tp != 0)
      reject(tp_path, "tp does not divide ffn_hidden",
             who + str(tp) + " does not divide ffn_hidden " + str(m.ffn_hidden));
  }
  // With per-sample data, the samples give image, video and audio modules their tokens (checked as
  // drawn).
  if (s.data && module.tokens != TokenSource::text) return;
  if (module.tokens == TokenSource::images && t.images == 0)
    reject("training.images", "no images", who + "its tokens are images; give images per sample");
  if (module.tokens == TokenSource::video && t.video_seconds <= 0.0)
    reject("training.video_seconds", "no video", who + "its tokens are video; give seconds of video per sample");
  if (module.tokens == TokenSource::audio && t.audio_seconds <= 0.0)
    reject("training.audio_seconds", "no audio", who + "its tokens are audio; give seconds of audio per sample");
  const SampleShape sample = t.sample();
  if (module_tokens(module, sample) == 0)
    reject("training.video_seconds", "no tokens", who + "a sample gives it no tokens");
  check_module_tokens(s, index, sample, "");
}

// What this version simulates of a model of several modules.
void validate_multimodal(const TrainingScenario& s) {
  const auto& modules = s.model.modules;
  if (std::all_of(modules.begin(), modules.end(), [](const ModuleSpec& m) { return m.frozen; }))
    reject("model.modules", "every module frozen", "every module is frozen: nothing to train");
  if (!s.model.multimodal()) return;
  if (s.training.attention_mask || s.parallel.cp_distribution) {
    reject(s.training.attention_mask ? "training.attention_mask" : "parallel.cp_distribution",
           "attention masks with several modules",
           "the attention mask of a model of several modules is not modelled (docs/context-parallel.md)");
  }
  if (s.parallel.cp > 1)
    reject("parallel.cp", "context parallelism with several modules",
           "context parallelism over a model of several modules is not supported; use cp = 1");
  const TrainingSpec& t = s.training;
  if (const SequenceTokens tokens = s.model.sequence_tokens(); !s.data && tokens.of(t.images, t.frames) > t.seq_len) {
    const std::string frames = t.frames > 0 ? " and " + str(t.frames) + " frames of " + str(tokens.per_frame) : "";
    reject("training.seq_len", "images longer than the sequence",
           str(t.images - t.frames) + " images of " + str(tokens.per_image) + frames + " tokens do not fit in " +
               str(t.seq_len) + " tokens (the sequence holds the image tokens)");
  }
}

// Each drawn microbatch's image and video tokens against the plan (the text modules' sequences
// are checked against the context the samples are padded within).
void check_microbatch_shapes(const TrainingScenario& s, const MicrobatchShapes& shapes) {
  for (const SampleShape& shape : shapes.distinct()) {
    for (std::size_t m = 0; m < s.model.modules.size(); ++m) {
      if (s.model.modules[m].tokens == TokenSource::text) continue;
      check_module_tokens(s, m, shape,
                          fmt::format("a microbatch of {} images, {:g} s of video and {:g} s of audio", shape.images,
                                      shape.video_seconds, shape.audio_seconds));
    }
  }
}

// parallel.modality_stages, checked before stage_layers are derived from it. Stages default to
// balancing parameters within each module.
void read_modality_plan(const JsonCursor& json, TrainingScenario& scenario) {
  ParallelPlan& plan = scenario.parallel;
  plan.modality_stages = read_modality_stages(json, scenario.model);
  if (plan.partition == ParallelPlan::Partition::modules) {
    reject("parallel.stage_layers", "modules partition with modality stages",
           "\"modules\" is for the encoder-first schedule; modules with stages of their own take a list, "
           "\"parameters\" or \"time\"");
  }
  if (plan.partition == ParallelPlan::Partition::given && plan.stage_layers.empty()) {
    plan.partition = ParallelPlan::Partition::parameters;
  }
  check_modality_plan(plan, scenario.model);
}

// The layers' compute times on `gpu`, a GPU type of the cluster, priced in `context`; from
// `priced` where it holds them, and kept there.
std::vector<std::int64_t> layer_times_on(const TrainingScenario& scenario, const MultimodalModel& model,
                                         const ShardContext& context, const DeviceSpec& gpu,
                                         LayerTimesByContext* priced) {
  auto price = [&] {
    return pipeline_layer_times(model, context, scenario.training.sample(), ClusterCostModel(scenario.cluster), &gpu);
  };
  if (priced == nullptr) return price();
  const std::pair<ShardContext, std::string> key{context, gpu.name};
  if (const auto known = priced->find(key); known != priced->end()) return known->second;
  return priced->emplace(key, price()).first->second;
}

// For a "time" partition on a cluster with stragglers or GPUs of several types, each virtual
// stage's pace relative to the fastest: that of the slowest GPU of its pipeline position (any
// replica's: the slowest replica paces the iteration), so that stages on slower GPUs get fewer
// layers. A GPU type's pace is the layers' time on the cluster's GPU over their time on it
// (`layer_times` on the cluster's GPU); a straggler's speed scales its type's. Empty otherwise.
std::vector<double> virtual_stage_speeds(const TrainingScenario& scenario, const MultimodalModel& model,
                                         std::span<const std::int64_t> layer_times, LayerTimesByContext* priced) {
  const ParallelPlan& plan = scenario.parallel;
  const ClusterSpec& cluster = scenario.cluster;
  std::vector<double> speeds;
  if (plan.partition != ParallelPlan::Partition::time || (!cluster.stragglers && cluster.node_groups.empty())) {
    return speeds;
  }
  auto total = [](std::span<const std::int64_t> times) {
    return static_cast<double>(std::accumulate(times.begin(), times.end(), std::int64_t{0}));
  };
  std::vector<double> type_pace{1.0};  // by node group + 1
  for (const NodeGroup& group : cluster.node_groups) {
    ShardContext context = scenario.shard_context();
    context.kernels = scenario.stack.kernels(group.gpu);  // its architecture's kernels
    const std::vector<std::int64_t> on_group = layer_times_on(scenario, model, context, group.gpu, priced);
    type_pace.push_back(total(layer_times) / total(on_group));
  }
  const std::int64_t per_position = std::int64_t{plan.tp} * plan.cp * plan.dp;
  std::vector<double> position_pace;
  for (int position = 0; position < plan.pp; ++position) {
    double slowest = std::numeric_limits<double>::infinity();
    for (std::int64_t rank = position * per_position; rank < (position + 1) * per_position; ++rank) {
      const double pace = type_pace[static_cast<std::size_t>(cluster.node_group_of(rank) + 1)];
      slowest = std::min(slowest, pace * cluster.gpu_speed(rank));
    }
    position_pace.push_back(slowest);
  }
  const double fastest = *std::max_element(position_pace.begin(), position_pace.end());
  for (int group = 0; group < plan.pp * plan.vpp; ++group) {
    speeds.push_back(position_pace[static_cast<std::size_t>(group % plan.pp)] / fastest);
  }
  return speeds;
}

}  // namespace

std::vector<std::int64_t> partition_weights(const TrainingScenario& scenario, LayerTimesByContext* priced) {
  const MultimodalModel model(scenario.model, scenario.parallel.cp_algorithm);
  if (scenario.parallel.partition != ParallelPlan::Partition::time) return pipeline_layer_parameters(model);
  for (const ModuleSpec& module : scenario.model.modules) {
    if (module_tokens(module, scenario.training.sample()) == 0) {
      reject("parallel.stage_layers", "time partition of an empty module",
             "\"time\" balances a sample as the training section gives it, and it gives module '" + module.name +
                 "' no tokens: give training.images, video_seconds or audio_seconds for a typical sample");
    }
  }
  return layer_times_on(scenario, model, scenario.shard_context(), scenario.cluster.gpu, priced);
}

void derive_stage_layers(TrainingScenario& scenario, LayerTimesByContext* priced) {
  ParallelPlan& plan = scenario.parallel;
  if (plan.partition == ParallelPlan::Partition::given) return;
  const MultimodalModel model(scenario.model, plan.cp_algorithm);
  const std::vector<std::int64_t> weights = partition_weights(scenario, priced);
  const std::span<const std::int64_t> layers(weights);
  if (!plan.modality_stages.empty()) {
    plan.stage_layers = partition_within_modules(layers, scenario.model, plan.modality_stages);
    return;
  }
  auto split = [](std::span<const std::int64_t> part, int groups, const std::string& stages, const std::string& what,
                  std::span<const double> speeds = {}) {
    if (static_cast<std::size_t>(groups) > part.size()) {
      reject("parallel.stage_layers", "more stages than layers",
             stages + " = " + str(groups) + " stages for " + str(static_cast<std::int64_t>(part.size())) + " " + what);
    }
    return partition_balanced(part, groups, speeds);
  };
  if (plan.partition != ParallelPlan::Partition::modules) {
    plan.stage_layers =
        split(layers, plan.pp * plan.vpp, "pp x vpp", "layers", virtual_stage_speeds(scenario, model, layers, priced));
    return;
  }
  if (plan.vpp != 2 || !scenario.model.multimodal()) {
    reject("parallel.stage_layers", "modules partition needs two chunks and several modules",
           "\"modules\" puts every module but the last on the first chunk of each stage and the last module on the "
           "second: it needs vpp = 2 and a model of several modules");
  }
  const auto backbone = static_cast<std::size_t>(scenario.model.first_layer(scenario.model.modules.size() - 1));
  plan.stage_layers = split(layers.first(backbone), plan.pp, "pp", "layers before the last module");
  const std::vector<int> last = split(layers.subspan(backbone), plan.pp, "pp", "layers of the last module");
  plan.stage_layers.insert(plan.stage_layers.end(), last.begin(), last.end());
}

std::optional<MicrobatchShapes> TrainingScenario::microbatch_shapes() const {
  if (!data) return std::nullopt;
  MicrobatchShapes shapes =
      draw_microbatch_shapes(*data, parallel.dp, checked_int(microbatches(), "microbatches per pipeline"),
                             training.micro_batch, training.seq_len, model.sequence_tokens());
  check_microbatch_shapes(*this, shapes);
  return shapes;
}

bool TrainingScenario::overlaps_tp_communication() const {
  return stack.tp_comm_overlap && parallel.sequence_parallel && parallel.tp > 1 &&
         cluster.gpu.kind == DeviceKind::gpu && parallel.tp <= cluster.gpus_per_node;
}

ShardContext TrainingScenario::shard_context() const {
  ShardContext context;
  context.tp = parallel.tp;
  context.cp = parallel.cp;
  context.sequence_parallel = parallel.sequence_parallel && parallel.tp > 1;
  context.micro_batch = training.micro_batch;
  context.seq_len = training.seq_len;
  context.dtype = training.dtype;
  context.kernels = stack.kernels(cluster.gpu);
  if (training.attention_mask || parallel.cp_distribution) {
    const MaskedAttention masked{.pattern = training.attention_mask.value_or(MaskPattern::causal),
                                 .distribution = parallel.cp_distribution.value_or(TokenDistribution::zigzag)};
    context.attention_share = slowest_rank_attention_share(masked, training.seq_len, parallel.cp);
    context.causal_share = masked.pattern == MaskPattern::causal;
  }
  return context;
}

bool TrainingScenario::recomputes_layers() const {
  return parallel.recompute == RecomputePolicy::full || per_op_checkpointing();
}

std::vector<std::uint8_t> TrainingScenario::recomputed_layers() const {
  const std::uint8_t recomputed = recomputes_layers() ? 1 : 0;
  const LayerRecompute& pick = parallel.recompute_layers;
  if (!recomputed || pick.method == LayerRecompute::Method::all || pick.method == LayerRecompute::Method::uniform) {
    return std::vector<std::uint8_t>(static_cast<std::size_t>(model.layers()), recomputed);
  }
  std::vector<std::uint8_t> mask(static_cast<std::size_t>(model.layers()), 0);
  const std::vector<int> layers = layers_per_virtual_stage();
  std::vector<int> rank_position(static_cast<std::size_t>(parallel.pp), 0);  // layers seen per rank
  std::size_t first = 0;
  for (std::size_t group = 0; group < layers.size(); ++group) {
    int& position = rank_position[group % rank_position.size()];
    for (int k = 0; k < layers[group]; ++k) {
      ++position;
      const bool picked = pick.method == LayerRecompute::Method::first ? k < pick.count : position % pick.count == 0;
      mask[first + static_cast<std::size_t>(k)] = picked ? 1 : 0;
    }
    first += static_cast<std::size_t>(layers[group]);
  }
  return mask;
}

bool TrainingScenario::per_op_checkpointing() const {
  return parallel.recompute == RecomputePolicy::selective && stack.selective_recompute == SelectiveRecompute::per_op;
}

bool TrainingScenario::recomputes_attention_core() const {
  return parallel.recompute == RecomputePolicy::selective &&
         stack.selective_recompute == SelectiveRecompute::attention_core;
}

bool TrainingScenario::selective_recompute_drops_activations() const {
  if (stack.selective_recompute == SelectiveRecompute::per_op) return true;
  const bool stack_unfused = stack.kernels(cluster.gpu).attention == Kernel::unfused;
  return std::any_of(model.modules.begin(), model.modules.end(), [&](const ModuleSpec& module) {
    return !module.projector && (stack_unfused || module.model.attention == AttentionKernel::unfused);
  });
}

std::vector<int> TrainingScenario::layers_per_virtual_stage() const {
  if (!parallel.stage_layers.empty()) return parallel.stage_layers;
  const int groups = parallel.pp * parallel.vpp;
  return std::vector<int>(static_cast<std::size_t>(groups), model.layers() / groups);
}

StageGraph TrainingScenario::stage_graph() const {
  if (!parallel.modality_stages.empty()) return StageGraph::modality(model, parallel.modality_stages);
  return StageGraph::chain(parallel.pp * parallel.vpp, parallel.pp);
}

void pad_vocabulary(TrainingScenario& scenario) {
  for (ModuleSpec& module : scenario.model.modules) {
    module.model.vocab_multiple = scenario.stack.vocab_multiple(scenario.parallel.tp);
  }
}

void validate_training_scenario(const TrainingScenario& s) {
  const ParallelPlan& p = s.parallel;
  if (s.training.attention_mask || p.cp_distribution) {
    const std::int64_t tokens = s.training.seq_len;
    if (tokens % kScenarioMaskTile != 0 || tokens < 2 * p.cp * kScenarioMaskTile || tokens > kMaxMaskedTokens) {
      reject(s.training.attention_mask ? "training.attention_mask" : "parallel.cp_distribution",
             "a masked sequence of whole tiles",
             "a mask's tokens are dealt in tiles of " + str(kScenarioMaskTile) +
                 ", at least 2 per CP rank: training.seq_len must be a multiple of " + str(kScenarioMaskTile) +
                 " from " + str(2 * p.cp * kScenarioMaskTile) + " to " + str(kMaxMaskedTokens) + ", not " +
                 str(tokens));
    }
  }
  validate_multimodal(s);
  validate_module_meshes(s);
  for (std::size_t m = 0; m < s.model.modules.size(); ++m) validate_module(s, m);
  const std::int64_t layers = s.model.layers();
  const std::int64_t groups = std::int64_t{p.pp} * p.vpp;
  if (p.stage_layers.empty()) {
    if (layers % groups != 0) {
      reject("parallel.pp", "pp x vpp does not divide the layers",
             "pp x vpp = " + str(groups) + " does not divide " + str(layers) +
                 " layers (give parallel.stage_layers for an uneven split)");
    }
  } else {
    if (static_cast<std::int64_t>(p.stage_layers.size()) != groups) {
      reject("parallel.stage_layers", "stage_layers has the wrong length",
             "expected pp x vpp = " + str(groups) + " entries, got " +
                 str(static_cast<std::int64_t>(p.stage_layers.size())));
    }
    for (std::size_t g = 1; g + 1 < p.stage_layers.size(); ++g) {
      if (p.stage_layers[g] == 0) {
        reject("parallel.stage_layers", "a middle stage without layers",
               "entry " + str(static_cast<std::int64_t>(g)) +
                   " is 0: only the first and the last virtual stage may have no layers (they hold the model's "
                   "ends)");
      }
    }
    const std::int64_t total = std::accumulate(p.stage_layers.begin(), p.stage_layers.end(), std::int64_t{0});
    if (total != layers) {
      reject("parallel.stage_layers", "stage_layers does not add up to the layers",
             "the entries add up to " + str(total) + " layers, the model has " + str(layers));
    }
  }
  if (p.per_module_meshes() && p.world_size() != s.cluster.gpus) {
    reject("parallel.modules", "dp x tp x pp x cp is not the GPU count",
           "the modules' meshes hold " + str(p.world_size()) + " GPUs (" + describe_module_meshes(s) +
               "), not the cluster's " + str(s.cluster.gpus));
  }
  if (p.world_size() != s.cluster.gpus) {
    reject("parallel", "dp x tp x pp x cp is not the GPU count",
           "dp x tp x pp x cp = " + str(p.dp) + " x " + str(p.tp) + " x " + str(p.pp) + " x " + str(p.cp) + " = " +
               str(p.world_size()) + " does not equal the cluster's " + str(s.cluster.gpus) + " GPUs");
  }
  const TrainingSpec& t = s.training;
  if (t.global_batch % (std::int64_t{p.dp} * t.micro_batch) != 0) {
    reject("training.global_batch", "global batch not divisible by dp x micro batch",
           str(t.global_batch) + " is not divisible by dp x micro_batch = " + str(std::int64_t{p.dp} * t.micro_batch));
  }
  if (p.schedule == PipelineSchedule::interleaved) {
    if (p.vpp < 2) reject("parallel.vpp", "interleaved needs vpp >= 2", "the interleaved schedule needs vpp >= 2");
    if (p.pp < 2) reject("parallel.pp", "interleaved needs pp >= 2", "the interleaved schedule needs pp >= 2");
    if (s.microbatches() % p.pp != 0) {
      reject("training.global_batch", "interleaved needs microbatches divisible by pp",
             "the interleaved schedule needs the " + str(s.microbatches()) +
                 " microbatches to be a multiple of pp = " + str(p.pp));
    }
  } else if (p.schedule == PipelineSchedule::encoder_first) {
    if (p.vpp != 2) {
      reject("parallel.vpp", "encoder-first needs vpp = 2",
             "the encoder-first schedule runs two chunks per stage (encoders, then the backbone): set vpp = 2");
    }
  } else if (p.vpp != 1) {
    reject("parallel.vpp", "vpp > 1 needs the interleaved schedule",
           "vpp = " + str(p.vpp) + " needs schedule 'interleaved' or 'encoder-first'");
  }
  if (p.zero >= 3 && p.schedule == PipelineSchedule::zb_h1) {
    reject("parallel.zero", "zero 3 needs weight gradients in the backward pass",
           "ZeRO-3 reduce-scatters each layer's gradients in its backward pass, and schedule 'zb-h1' defers weight "
           "gradients to passes of their own (use 1f1b, interleaved or gpipe)");
  }
  if (p.redundant_computation) validate_redundant_computation(s);
  if (p.dp_shard > 0) validate_hybrid_sharding(s);
  if (p.recompute_layers.method != LayerRecompute::Method::all) validate_layer_recompute(s);
  if (p.cp > 1 && t.seq_len % (2 * p.cp) != 0) {
    reject("training.seq_len", "sequence not divisible by 2 x cp",
           str(t.seq_len) + " is not divisible by 2 x cp = " + str(2 * p.cp) + " (load-balanced context parallelism)");
  }
  if (s.data) validate_data(s);
}

TrainingScenario load_training_scenario(const JsonCursor& root,
                                        std::optional<std::shared_ptr<const CalibratedCostModel>> calibration) {
  TrainingScenario scenario = load_scenario_without_plan(root);
  if (calibration) scenario.cluster.calibration = std::move(*calibration);
  scenario.parallel = read_parallel(root.at("parallel"), scenario.cluster);
  pad_vocabulary(scenario);
  if (auto value = root.find("data")) scenario.data = load_data_spec(*value);
  if (auto value = root.at("parallel").find("modality_stages")) read_modality_plan(*value, scenario);
  if (root.at("parallel").find("modules")) read_module_meshes(root.at("parallel"), scenario);
  derive_stage_layers(scenario);
  validate_training_scenario(scenario);
  return scenario;
}

TrainingScenario load_sweep_scenario(const JsonCursor& root) {
  TrainingScenario scenario = load_scenario_without_plan(root);
  if (auto value = root.find("data")) scenario.data = load_data_spec(*value);
  return scenario;
}

}  // namespace weft
