#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "simulator/core/input_error.hpp"

#include "cost_models/cluster_spec.hpp"
#include "cost_models/collective_model.hpp"
#include "cost_models/parallel_dims.hpp"
#include "simulator/workload/context_parallel/masked_attention.hpp"
#include "simulator/workload/data/data_spec.hpp"
#include "simulator/workload/modules/attention_core.hpp"
#include "simulator/workload/multimodal_spec.hpp"
#include "simulator/workload/recompute_policy.hpp"
#include "simulator/workload/software_stack.hpp"
#include "simulator/workload/stage_graph.hpp"
#include "simulator/workload/step.hpp"

namespace weft {

enum class PipelineSchedule : std::uint8_t { gpipe, one_f_one_b, interleaved, zb_h1, encoder_first };

inline constexpr EnumNames<PipelineSchedule, 5> kPipelineScheduleNames({"gpipe", "1f1b", "interleaved", "zb-h1",
                                                                        "encoder-first"});

struct ParallelPlan {
  int tp = 1;
  int cp = 1;
  int pp = 1;
  int dp = 1;
  int vpp = 1;  // model chunks per pipeline rank (interleaved schedule)
  bool sequence_parallel = false;
  int zero = 0;  // 1: distributed optimizer (ZeRO-1)
  // Hybrid sharding (FSDP's HYBRID_SHARD, torchtitan's data_parallel_shard_degree): ZeRO shards
  // over groups of this many data-parallel ranks (times cp), replicated over dp / dp_shard groups;
  // 0: over all of dp.
  int dp_shard = 0;
  PipelineSchedule schedule = PipelineSchedule::one_f_one_b;
  RecomputePolicy recompute = RecomputePolicy::none;
  LayerRecompute recompute_layers;  // with recompute full: which layers
  ContextParallelAlgorithm cp_algorithm = ContextParallelAlgorithm::ring;
  // How the CP group deals a sequence's tokens, when given; with neither it nor an attention mask,
  // every rank computes an even share of the model's own mask.
  std::optional<TokenDistribution> cp_distribution;
  // Layers of each virtual pipeline stage, pp * vpp entries in pipeline order (stage s, chunk c
  // is entry c * pp + s); empty for an even split.
  std::vector<int> stage_layers;
  // How stage_layers were derived: as given, balancing the stages' parameters, balancing their
  // compute time per microbatch, or balancing parameters within the first pp stages (every
  // module but the last) and within the last pp (the last module), for the encoder-first schedule.
  enum class Partition : std::uint8_t { given, parameters, time, modules };
  Partition partition = Partition::given;
  // Modality parallelism (modality_stages.hpp): per module, the pipeline stages of its own (0
  // for a projector); empty: the modules share one pipeline.
  std::vector<int> modality_stages;
  // Bamboo's redundant computation (Thorpe et al., NSDI 2023): each stage also holds its
  // successor's layers (the last stage the first's) with their optimizer states, and runs their
  // forward on every microbatch after its own (docs/resilience.md).
  bool redundant_computation = false;
  // Per-module meshes (parallel.modules, module_meshes.hpp): per module, as modality_stages lists
  // them, its TP and DP (a projector's are those of the module it reads); empty: every stage has
  // tp and dp.
  std::vector<PositionMesh> module_meshes;

  bool per_module_meshes() const { return !module_meshes.empty(); }
  // The TP and DP of the stages at pipeline position `position` (module_meshes.cpp).
  PositionMesh mesh_at(int position) const;
  // Where the plan's ranks sit: tp, cp, dp and pp, and each position's mesh.
  ParallelDims dims() const;
  std::int64_t world_size() const {
    return per_module_meshes() ? dims().world_size() : std::int64_t{tp} * cp * pp * dp;
  }
  // The data-parallel ranks one ZeRO shard group spans, and how many such groups hold replicas.
  int shard_dp() const { return dp_shard > 0 ? dp_shard : dp; }
  // 1 without hybrid sharding (and for a plan whose dp is not derived yet, 0).
  int shard_replicas() const { return dp_shard > 0 && dp_shard < dp ? dp / dp_shard : 1; }
  bool hybrid_sharding() const { return shard_replicas() > 1; }
  // The ranks ZeRO divides optimizer states (and, from zero 2, gradients; at 3, parameters) over.
  std::int64_t zero_shards() const { return zero >= 1 ? std::int64_t{shard_dp()} * cp : 1; }
  // The same for the stages at `position`, whose module may have a DP of its own (hybrid
  // sharding and module meshes do not go together).
  int shard_dp_at(int position) const { return per_module_meshes() ? mesh_at(position).dp : shard_dp(); }
  std::int64_t zero_shards_at(int position) const { return zero >= 1 ? std::int64_t{shard_dp_at(position)} * cp : 1; }
  RecomputeChoice recompute_choice() const { return {.policy = recompute, .layers = recompute_layers}; }
};

// Hybrid sharding inside a node: the data-parallel ranks one node's GPUs hold besides the tp x cp
// ranks of each (parallel.dp_shard "node"); nullopt where they do not divide the node.
std::optional<int> node_shard_dp(int gpus_per_node, int tp, int cp);

// The most tokens a module may see in one microbatch (and a sequence may have).
inline constexpr std::int64_t kMaxMicrobatchTokens = std::int64_t{1} << 24;
// Samples per iteration: 2^36 of the longest sequences (2^24 tokens) still count their tokens in
// an int64.
inline constexpr std::int64_t kMaxGlobalBatch = std::int64_t{1} << 36;
// More than any GPU holds; bounded so that it converts to bytes exactly.
inline constexpr std::int64_t kMaxFrameworkOverheadGiB = std::int64_t{1} << 20;

struct TrainingSpec {
  std::int64_t global_batch = 0;  // samples per iteration
  std::int64_t micro_batch = 1;   // samples per microbatch
  std::int64_t seq_len = 0;       // tokens per sample (text; a VLM's whole sequence)
  std::int64_t images = 0;        // images per sample, for modules of image tokens
  std::int64_t frames = 0;        // of them, video frames (SampleShape::frames)
  double video_seconds = 0.0;     // seconds of video per sample, for modules of video tokens
  double audio_seconds = 0.0;     // seconds of audio per sample, for modules of audio tokens
  Dtype dtype = Dtype::bf16;
  // The sequences' attention mask, when it is not the model's own (docs/context-parallel.md).
  std::optional<MaskPattern> attention_mask;

  // What each sample holds, as the modules see it.
  SampleShape sample() const {
    return {.seq_len = seq_len,
            .images = images,
            .video_seconds = video_seconds,
            .audio_seconds = audio_seconds,
            .frames = frames};
  }
};

struct TrainingOptions {
  Bytes framework_overhead = 0;  // per GPU: CUDA context, workspaces, communication buffers
  bool ideal_network = false;    // every communication op takes no time
  bool host_issue = true;        // the host issues each compute kernel (docs/host-issue.md)
  bool kernel_gap = true;        // the device's gap between kernels queued back to back (the same)
  bool overlap_grad_reduce = true;
  bool overlap_param_gather = true;
  // Compute beside the data-parallel collectives it overlaps runs on the SMs they leave
  // (training_collective_contention.cpp, with the GPU's collective_sms).
  bool collective_contention = true;
  std::int64_t dp_bucket_parameters = 0;  // 0: Megatron's default, max(40M, 1M x DP)
  std::optional<CollectiveAlgorithm> collective_algorithm;
};

// A training run to simulate (docs/scenarios.md): model, cluster, parallel plan, training and
// options, validated as a whole.
struct TrainingScenario {
  std::string description;
  MultimodalSpec model;
  ClusterSpec cluster;
  SoftwareStack stack;
  ParallelPlan parallel;
  TrainingSpec training;
  TrainingOptions options;
  std::optional<DataSpec> data;  // per-sample data; absent: every sample has seq_len tokens

  std::int64_t microbatches() const { return training.global_batch / (parallel.dp * training.micro_batch); }
  // Layers of each virtual pipeline stage, in pipeline order.
  std::vector<int> layers_per_virtual_stage() const;
  // Which virtual stages read which: a chain, or a tree under modality parallelism.
  StageGraph stage_graph() const;
  // How the plan shards one microbatch of the training section over a rank (tp, cp, sequence
  // parallelism, micro-batch, dtype, sequence length); module_context() adapts it per module.
  ShardContext shard_context() const;
  // With per-sample data, the shape of each microbatch of each DP replica (InputError if a
  // drawn microbatch cannot be split as the plan splits it).
  std::optional<MicrobatchShapes> microbatch_shapes() const;
  // Whether the forward pass's TP communication overlaps the GEMMs beside it (the stack's
  // tp_comm_overlap, which Transformer Engine's userbuffers give only with sequence parallelism
  // and a TP group of GPUs inside one node).
  bool overlaps_tp_communication() const;
  // Whether selective recompute drops any activation: per-op checkpointing always does;
  // Megatron-LM's recomputes the attention core, whose scores and softmax output only unfused
  // attention keeps (attention_core.cpp), so where every module's attention is fused it keeps
  // what no recompute keeps.
  bool selective_recompute_drops_activations() const;
  // Whether layers are recomputed from a checkpoint before their backward pass: full recompute,
  // and selective recompute where the stack's is per-op checkpointing (which keeps more than each
  // layer's input: Step::op_checkpoint_bytes).
  bool recomputes_layers() const;
  // Per layer of the model, whether it is recomputed (1) or keeps its activations (0): every layer
  // where recomputes_layers() unless parallel.recompute_layers picks some; none otherwise.
  std::vector<std::uint8_t> recomputed_layers() const;
  bool per_op_checkpointing() const;
  // Selective recompute of Megatron-LM's attention core (Step::recomputable_bytes).
  bool recomputes_attention_core() const;
};

// The parts Transformer Engine's "pipeline" overlap splits a row-parallel GEMM and its
// reduce-scatter into, and the SMs its reduce-scatter kernels hold, which the GEMM leaves them
// (num_splits, num_sm and set_sm_margin by default; training_tp_overlap.cpp).
inline constexpr std::int64_t kTpOverlapPipelineParts = 4;
inline constexpr int kTpOverlapPipelineSms = 16;

// Reads and validates a training scenario; errors name the JSON path and the reason
// ("parallel.tp: 3 does not divide attention heads 32").
// `calibration`, when given, replaces the cluster's own profile (ClusterSpec::calibration; null:
// none) from the start: a "time" stage partition is balanced under it, as the iteration is
// simulated.
TrainingScenario load_training_scenario(
    const JsonCursor& root, std::optional<std::shared_ptr<const CalibratedCostModel>> calibration = std::nullopt);

// The model, cluster, training and options of a scenario, without a plan: what a sweep varies
// the plan over, with its per-sample data if any. A "parallel" section, if present, is not read.
TrainingScenario load_sweep_scenario(const JsonCursor& root);

// A plan that cannot run: which rule it breaks (a short stable phrase, for counting plans by
// reason) and the full message naming the field.
class InvalidPlan : public InputError {
 public:
  InvalidPlan(const std::string& message, std::string rule) : InputError(message), rule_(std::move(rule)) {}
  const std::string& rule() const { return rule_; }

 private:
  std::string rule_;
};

// Checks the plan against the model, cluster and batch; throws InvalidPlan naming the field.
// Used after every change of a plan (the sweep builds plans without JSON).
// Pads each module's vocabulary as the scenario's stack does for its plan's TP size
// (ModelSpec::vocab_multiple); a plan's scenario gets it before it is validated or built.
void pad_vocabulary(TrainingScenario& scenario);

void validate_training_scenario(const TrainingScenario& scenario);

// Per-layer compute times already priced for plans of one sweep (one model, sample and cluster),
// by shard context and GPU type (its name): what a "time" partition balances.
using LayerTimesByContext = std::map<std::pair<ShardContext, std::string>, std::vector<std::int64_t>>;

// What the plan's partition rule balances over its stages, per pipeline layer: compute times per
// microbatch for "time" (from and into `priced` as below), parameters otherwise. Throws
// InvalidPlan where a module the time partition prices has no tokens in a sample.
std::vector<std::int64_t> partition_weights(const TrainingScenario& scenario, LayerTimesByContext* priced = nullptr);

// Sets parallel.stage_layers by the plan's partition rule (ParallelPlan::partition): balancing
// parameters, or compute time (where the cluster has stragglers, slower stages get fewer
// layers); nothing for a given partition. Throws InvalidPlan naming the field. With `priced`,
// the layer times come from there where it holds the plan's shard context, and go there where
// not.
void derive_stage_layers(TrainingScenario& scenario, LayerTimesByContext* priced = nullptr);

}  // namespace weft
