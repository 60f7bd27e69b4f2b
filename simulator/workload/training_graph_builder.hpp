#pragma once

// The builder of a training iteration's graph (build_training_workload), shared by the files that
// hold its parts: training_graph_builder.cpp (ranks, streams, communicators, chunks, stages),
// training_pipeline_transfers.cpp (links and transfers between stages), training_passes.cpp
// (forward, backward, recompute and weight passes), training_pass_templates.cpp and
// training_pass_emission.hpp (passes as composites and the bundles between them),
// training_data_parallel.cpp (gradient reduction, parameter gathers, the optimizer) and
// training_redundant_forward.cpp (Bamboo's redundant computation). Its values are in
// training_graph_parts.hpp.

#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <tuple>
#include <unordered_map>
#include <vector>

#include <fmt/format.h>

#include "simulator/graph/graph_builder.hpp"
#include "simulator/workload/multimodal_model.hpp"
#include "simulator/workload/pipeline_schedule.hpp"
#include "simulator/workload/tp_overlap_pair.hpp"
#include "simulator/workload/training_graph_parts.hpp"

namespace weft::training_graph {

class ShardedLayers;

class TrainingGraphBuilder {
 public:
  TrainingGraphBuilder(const TrainingScenario& scenario, const WorkloadOptions& options);

  TrainingWorkload build();

 private:
  // ---- ranks, streams and links -------------------------------------------------------------

  // Stages are numbered replica by replica, each replica's in pipeline order. Uniform data on
  // healthy GPUs has one replica, so a stage is its pipeline position; per-sample data simulates
  // each DP replica of each position's mesh, stragglers each distinct replica (replica_dp_).
  int position_of(int stage) const { return stage_position_[static_cast<std::size_t>(stage)]; }
  int replica_of(int stage) const { return stage_replica_[static_cast<std::size_t>(stage)]; }
  int stage_of(int replica, int position) const {
    return stage_index_[static_cast<std::size_t>(position) * static_cast<std::size_t>(replicas_) +
                        static_cast<std::size_t>(replica)];
  }
  int stage_count() const { return static_cast<int>(stage_position_.size()); }
  // The replicas simulated at `position`: on per-sample data its mesh's DP, else replicas_.
  int replicas_at(int position) const { return microbatch_shapes_ ? dims_.dp_at(position) : replicas_; }
  void number_stages();

  void create_ranks();
  // The DP ranks the peers of `replica`'s stages stand for: [first, end).
  std::pair<int, int> dp_ranks(int replica) const;

  void add_peer(int stage, const RankCoordinates& c);
  // The device spec and outer device of each peer of `stage`, for a recorder.
  std::pair<std::vector<DeviceSpec>, std::vector<DeviceId>> recording_devices(int stage) const;

  // The link carrying point-to-point traffic from one rank to another, created on first use.
  StreamId link(const Peer& from, const Peer& to);

  // ---- communicators ------------------------------------------------------------------------

  // The placement of the `kind` communicator of rank `c` (all of a stage's groups of one kind
  // have the same shape in Megatron's rank order). The data-parallel one is ZeRO's shard group:
  // under hybrid sharding, dp_shard of the data-parallel ranks.
  std::uint32_t group_id(CommGroupKind kind, const RankCoordinates& c);

  std::uint32_t point_to_point_group(CommGroupKind kind, std::int64_t from, std::int64_t to);

  // Peers that form one `kind` collective together: equal coordinates outside its dimensions.
  // Computed once per stage and kind.
  const std::vector<std::vector<std::size_t>>& partition(int stage, CommGroupKind kind);

  // ---- ops and tensors on every peer of a stage ---------------------------------------------

  // Communication ops carry their communicator; a step's compute ops do not.
  WorkId placed_work(const OpWork& base, std::optional<CommGroupKind> kind, int stage);

  // The work of a chunk step (which outlives the build), remembered by address so that every
  // microbatch reuses its id without hashing the work again.
  WorkId step_work(const OpWork& step_work, std::optional<CommGroupKind> kind, int stage);

  // The communicator of `kind` for the peers of `stage`, placed once per stage and kind.
  std::uint32_t stage_group(CommGroupKind kind, int stage);

  // The stream of `lane` on `peer`; while a pass is recorded, the template's stream standing
  // for it.
  StreamId lane_stream(const Peer& peer, Lane lane);

  static StreamId outer_lane_stream(const Peer& peer, Lane lane);

  // The peers of `stage`: while one of its passes is recorded, the template's.
  const std::vector<Peer>& peers(int stage) const;

  // The same op on every peer of `stage`; collectives of more than one simulated member are
  // grouped with their peers. A compute op added while collectives run beside it
  // (collective_sms_share_) runs on the SMs they leave.
  PerPeer<OpId> add_ops(int stage, std::string_view name, WorkId work_id, std::optional<CommGroupKind> kind,
                        Lane lane = Lane::compute);

  PerPeer<TensorId> add_tensors(int stage, Bytes bytes, TensorKind kind, std::string_view name = {});

  void consume(const PerPeer<OpId>& ops, const PerPeer<TensorId>& tensors);

  void produce(const PerPeer<OpId>& ops, const PerPeer<TensorId>& tensors);

  // Scratch memory of `bytes` that each of `ops` holds while it runs (none when 0).
  void add_workspace(int stage, const PerPeer<OpId>& ops, Bytes bytes);

  void after(const PerPeer<OpId>& before, const PerPeer<OpId>& ops);

  void after(const PerPeer<Gate>& before, const PerPeer<OpId>& ops);

  // ---- the model, cut into chunks -----------------------------------------------------------

  // The stage of `stage`'s replica that holds virtual stage `group`.
  int stage_of_group(int stage, int group) const { return stage_of(replica_of(stage), group % s_.parallel.pp); }
  int group_count() const { return graph_.groups(); }

  // What each sample of a microbatch of `stage`'s replica holds: on per-sample data, the replica's
  // own microbatch, or for a module on a mesh of another DP its share of the slot.
  SampleShape sample_of(int stage, int microbatch) const {
    if (!microbatch_shapes_) return uniform_sample();
    const MicrobatchShapes* module = position_shapes_[static_cast<std::size_t>(position_of(stage))];
    return (module != nullptr ? *module : *microbatch_shapes_).at(replica_of(stage), microbatch);
  }
  SampleShape uniform_sample() const { return s_.training.sample(); }

  // The chunks of `stage` for microbatches of `sample`s, with the kernels of its GPU type.
  std::vector<Chunk>& chunks_of(int stage, const SampleShape& sample) {
    return chunks_.at(
        {sample, stage_kernels_[static_cast<std::size_t>(stage)]})[static_cast<std::size_t>(position_of(stage))];
  }
  // The chunks of `stage` for some shape: for what does not depend on it (steps, parameters).
  const std::vector<Chunk>& chunks_of(int stage) const {
    return chunks_.begin()->second[static_cast<std::size_t>(position_of(stage))];
  }
  // Chunks for every microbatch shape that occurs and every GPU type's kernels.
  void create_chunks();
  // The chunks of every pipeline position for microbatches of sample_, with context_'s kernels.
  void create_chunks(std::vector<std::vector<Chunk>>& chunks);
  // The shape of a chunk: an earlier chunk's if both do the same work in the same layers, the
  // first and last virtual stages apart (they hold the model's ends); a new one otherwise.
  // Named ops name their layers, so then every chunk has a shape of its own.
  std::size_t shape_of(const Chunk& chunk);

  // The activation virtual stage `group` passes to the next (and the gradient coming back), for
  // the microbatch being emitted: its last step's output on the rank's shard of the tokens (every
  // virtual stage has steps: validate_training_scenario gives each one a layer or a model end).
  Bytes boundary_bytes(int group) const { return boundary_bytes(group, sample_); }
  Bytes boundary_bytes(int group, const SampleShape& sample) const {
    const int pp = s_.parallel.pp;
    return chunks_.at({sample, 0})[static_cast<std::size_t>(group % pp)][static_cast<std::size_t>(group / pp)]
        .steps.back()
        .output_bytes;
  }
  // The activation entering step `i` of `chunk`.
  static Bytes input_bytes(const Chunk& chunk, std::size_t i) {
    return i == 0 ? chunk.input_bytes : chunk.steps[i - 1].output_bytes;
  }

  // The parameters a stage holds, and those of them it trains.
  std::int64_t stage_parameters(int stage, bool trainable_only) const;

  int optimizer_shards(int stage) const { return static_cast<int>(s_.parallel.zero_shards_at(position_of(stage))); }
  // A stage's DP x CP (its gradients are reduced over them) and TP: its module's under meshes.
  int dp_ranks_reduced(int stage) const { return dims_.dp_at(position_of(stage)) * dims_.cp; }
  int tp_of(int stage) const { return dims_.tp_at(position_of(stage)); }

  void create_static_tensors(int stage);

  // ---- one stage: its schedule ----------------------------------------------------------------

  void emit_stage(int stage);

  // With per-sample data, a data-parallel collective spans one stage of every replica: its
  // members are gathered replica by replica (the n-th such op of each stage of a position goes
  // with the n-th of the others) and grouped once all are emitted.
  void join_replicas(int stage, std::string_view name, const PerPeer<OpId>& ops);

  void group_replica_collectives();

  // Formats an op or tensor name into a reused buffer; the view lasts until the next call.
  template <class... Args>
  std::string_view name(fmt::format_string<Args...> format, Args&&... args) {
    if (!name_ops_) return {};
    name_buffer_.clear();
    fmt::format_to(std::back_inserter(name_buffer_), format, std::forward<Args>(args)...);
    return {name_buffer_.data(), name_buffer_.size()};
  }

  // "<step> <phase> mb<microbatch>", for every op of every microbatch: built without a format
  // string, which costs more than the rest of adding the op.
  std::string_view op_name(const Step& step, std::string_view phase, int microbatch);

  // " mb<microbatch>", or nothing in a template (microbatch -1) or when ops are not named.
  std::string mb_suffix(int microbatch) const;

  // ---- forward --------------------------------------------------------------------------------

  void emit_forward(int stage, Chunk& chunk, const PipelineAction& action, ForwardRecord& record);

  // The chunk's forward pass of a microbatch from input `x`: fills record (output, saved tensors,
  // checkpoints) and returns its first ops.
  // `also_read`: activations of further stages the chunk reads (under modality parallelism, the
  // other encoders' outputs), which its first op waits for with `x`.
  PerPeer<OpId> forward_body(int stage, const Chunk& chunk, PerPeer<TensorId> x,
                             std::span<const PerPeer<TensorId>> also_read, int mb, ForwardRecord& record);

  // ---- passes as composites -------------------------------------------------------------------

  // A composite of the chunk's pass `phase` for microbatch `mb`, standing on every peer of the
  // stage, from `inputs` and the bundles of `bundles` routed to it (which it takes); fills
  // `escapes`, adds the bundles it leaves to `bundles`, and returns the composite on every peer.
  template <class Body>
  PerPeer<OpId> emit_pass(int stage, const Chunk& chunk, std::string_view phase, int mb, PassValues inputs,
                          PassValues& escapes, BundleSet& bundles, Body&& body);

  // The pass that takes the bundles of `route`, and the pass that leaves them.
  static std::string_view phase_taking(Route route);
  static std::string_view phase_leaving(Route route);

  // The members of `route`'s bundles, as the pass leaving them recorded them.
  const PassTemplate::BundleShape& bundle_shape(const Chunk& chunk, Route route) const;

  // Adds `value` (a tensor per peer, or nothing) to the bundle of `route` that a pass leaves, as
  // member `key`; returns the key it is a member under (an earlier one if it is already in).
  static std::uint32_t leave(std::vector<PassBundle>& leaving, Route route, std::uint32_t key,
                             const PerPeer<TensorId>& value);

  // Where what step `k` saved goes: to the weight pass if its weight gradient waits for one,
  // else to the backward pass.
  Route route_of_saved(const Chunk& chunk, std::size_t k, Route to_backward) const;

  // The checkpoints of the chunk's last layer (or group of layers) go to its own recompute pass;
  // the others to the backward pass, which recomputes those layers itself.
  Route route_of_checkpoint(const Chunk& chunk, std::size_t k) const;

  // Handles of the members of the bundles a chunk's pass leaves, by step, for the passes that
  // take them to read: (what) -> per step, a handle per peer.
  std::vector<PerPeer<TensorId>> member_handles(const Chunk& chunk, std::string_view phase, Kept what);

  // A pass template and the stage whose streams and devices it was recorded on.
  struct RecordedPass {
    int stage = 0;
    PassTemplate pass;
  };

  // The template of a chunk's pass, recorded on first use by running `body` (which returns the
  // escaping values and fills the bundles it leaves) with the pass's ops going into the template.
  // Chunks of one shape share it, on any stage.
  template <class Body>
  const RecordedPass& pass_template(int stage, const Chunk& chunk, std::string_view phase, const PassValues& inputs,
                                    Body&& body);

  // Streams and devices of stage `from` and those of stage `to` in the same place (peer, lane).
  struct StageTranslation {
    std::map<StreamId, StreamId> streams;
    std::map<DeviceId, DeviceId> devices;
  };
  const StageTranslation& translation(int from, int to);

  // A composite of `pass` for microbatch `mb` on `stage`; the ops after it on the compute streams
  // and the gradient reduction wait for it.
  PerPeer<OpId> instantiate(int stage, const Chunk& chunk, const RecordedPass& pass, std::string_view phase, int mb,
                            const PassValues& inputs, PassValues& escapes, PassValues& bundles);

  bool is_layer(const Chunk& chunk, std::size_t step) const;
  // Whether step `step` belongs to a layer that full recompute (or per-op checkpointing)
  // recomputes before its backward (TrainingScenario::recomputed_layers).
  bool recomputes_layer(const Chunk& chunk, std::size_t step) const;
  // The layers full recompute checkpoints and reruns together, by the group step `step` is in:
  // its layer, or under Megatron's uniform method its group of layers of the chunk; -1 outside
  // layers. A group's first step keeps its checkpoint; its last step's backward reruns it.
  int recompute_group(const Chunk& chunk, std::size_t step) const;

  // While a pass is recorded, the ops added from now on belong to the layer of step `step` (none
  // for the input and output blocks): each layer of a pass becomes a nested template, shared by
  // identical layers of every pass.
  void begin_layer(const Chunk& chunk, std::size_t step) {
    if (recorder_ == nullptr) return;
    recorder_->begin_group(is_layer(chunk, step) ? static_cast<std::uint32_t>(chunk.block[step]) : kNoGroup);
  }

  // Ring attention: the chunk's attention in `context_parallel_chunks` parts, each after the keys
  // and values of the next CP rank arrive over the CP stream. Returns the ops whose end is the
  // step's end (the last part). Backward sends twice the bytes (keys/values and their gradients).
  PerPeer<OpId> emit_ring_attention(int stage, const Step& step, const OpWork& whole, std::string_view phase, int mb,
                                    const PerPeer<TensorId>& input, int traffic_factor);

  // Forward TP communication overlapped with the GEMM beside it (TrainingScenario::
  // overlaps_tp_communication), as Transformer Engine's userbuffers run it: an all-gather before a
  // column-split GEMM as a ring exchange, the GEMM in TP parts each after its chunk arrives; a
  // reduce-scatter after a row-split GEMM as a pipeline, the GEMM in 4 parts each reduced while
  // the next computes (training_tp_overlap.cpp).
  // Which overlap steps i and i + 1 of the chunk's forward pass form.
  TpOverlapPair tp_overlap_at(const Chunk& chunk, std::size_t i) const;
  // Emits both steps; returns the ops of each whose end is the step's end as the rest of the
  // pass sees it, and which produce and keep its output (`first_output` lives until the second's
  // end: the userbuffer holding the gathered input or the GEMM's partial sums).
  std::pair<PerPeer<OpId>, PerPeer<OpId>> emit_tp_overlap(TpOverlapPair overlap, int stage, const Step& first,
                                                          const Step& second, int mb, const PerPeer<TensorId>& input,
                                                          const PerPeer<TensorId>& first_output);

  // A tensor crossing pipeline stages, created by whichever side is emitted first.
  PerPeer<TensorId> boundary_tensor(const BoundaryKey& key, int receiving_stage);

  // On per-sample data, between meshes of different DP, DFLOP's communicator relays a boundary
  // (module_meshes.hpp): one transfer of the slot's relay_bytes, from the sending position's
  // first replica to the receiving position's, that reads every sending replica's value and
  // gives every receiving replica its own. Made by whichever side is emitted first.
  struct Relay {
    OpId op;
    std::vector<PerPeer<TensorId>> received;  // by replica of the receiving position
  };
  bool relayed(const BoundaryKey& key) const;
  Relay& relay(const BoundaryKey& key);

  // Sends `value` from this stage to the stage of virtual stage `to_group` over each peer's link.
  void send(int stage, int to_group, const BoundaryKey& key, const PerPeer<TensorId>& value, std::string_view what);

  // ---- backward and weight passes -------------------------------------------------------------

  void emit_backward(int stage, Chunk& chunk, const PipelineAction& action, ForwardRecord& record,
                     std::vector<PendingWeightGrad>& pending);

  // The backward of a microbatch as composites: the recompute pass of the chunk's last layer
  // when it has one, then the backward pass, which leaves what the weight pass needs in a
  // bundle. Returns the input gradient; `pending` gets the weight gradients left to the weight
  // pass, as handles of bundle members.
  PerPeer<TensorId> emit_backward_passes(int stage, const Chunk& chunk, int mb, const PerPeer<TensorId>& dy,
                                         ForwardRecord& record, std::vector<PendingWeightGrad>& pending);

  // What a chunk's forward pass saved and checkpointed, as handles of its bundles' members.
  ForwardRecord forward_handles(const Chunk& chunk);

  PerPeer<TensorId> handles_of(std::uint32_t key, std::size_t peers);

  // Whether full recompute of the chunk's last step's layer starts its backward, before any op
  // reads the incoming gradient.
  bool recomputes_before_gradient(const Chunk& chunk) const;

  // The chunk's backward pass of a microbatch from output gradient `dy`, with what its forward
  // saved and `recomputed` (what a recompute pass before it rematerialized); returns the input
  // gradient. Weight gradients are computed, or left in `pending`.
  PerPeer<TensorId> backward_body(int stage, const Chunk& chunk, PerPeer<TensorId> dy, const ForwardRecord& record,
                                  std::vector<PerPeer<TensorId>> recomputed, int mb,
                                  std::vector<PendingWeightGrad>& pending);

  // Full recompute: before the backward of the layer ending at step `last`, run its forward again
  // from the checkpointed input, saving what its backward needs.
  void recompute_layer(int stage, const Chunk& chunk, std::size_t last, int mb, const ForwardRecord& record,
                       std::vector<PerPeer<TensorId>>& recomputed);

  // ZeRO-3's per-layer gathers and reduce-scatters (training_sharded_layers.hpp).
  friend class ShardedLayers;
  PerPeer<TensorId> layer_parameters_;  // the gathered parameters the current layer's ops read
  // ---- compute beside data-parallel collectives (training_collective_contention.cpp) ----------

  // The spec of the stage's GPU type, at full speed.
  const DeviceSpec& stage_gpu(int stage) const;
  // A collective's time over the stage's communicator of `kind`.
  TimeNs collective_time(int stage, const OpWork& work, CommGroupKind kind);
  // The time alone of the compute ops of step k of the chunk in a forward pass, a backward pass
  // (with what it recomputes, and its weight gradients unless they have a pass of their own) or a
  // weight pass; each op work costed once per GPU type (stages repeat the same steps).
  enum class PassWork : std::uint8_t { forward, backward, weight };
  TimeNs step_compute_time(int stage, const Chunk& chunk, std::size_t k, PassWork pass);
  std::unordered_map<const DeviceSpec*, std::unordered_map<OpWork, TimeNs, OpWorkHash>> compute_alone_ns_;
  // The SMs the stage's data-parallel collectives of `collective` ns hold (inside a node or across
  // nodes, as its DP group lies), averaged over `compute` ns of the stage's compute they overlap
  // (averaged_collective_sms); 0 with the option off.
  double collective_share(int stage, TimeNs compute, TimeNs collective);
  // Below ZeRO-3, the gradient-making pass of each chunk's last microbatch runs beside the stage's
  // overlapped gradient reduction from the step where its first bucket fills.
  struct GradientWindow {
    double share = 0.0;
    std::vector<std::vector<bool>> before_first_bucket;  // per chunk, per step; empty: no window
  };
  bool in_gradient_window(int stage, int mb, std::string_view phase) const;
  const GradientWindow& gradient_window(int stage, int mb);  // made once per stage
  // Before step `step`'s ops in the window: the share its compute runs beside.
  void enter_gradient_step(const Chunk& chunk, std::size_t step);
  // While alive, the passes emitted are in the window when `phase` and `mb` are its.
  class GradientWindowScope {
   public:
    GradientWindowScope(TrainingGraphBuilder& builder, int stage, int mb, std::string_view phase);
    GradientWindowScope(const GradientWindowScope&) = delete;
    GradientWindowScope& operator=(const GradientWindowScope&) = delete;
    ~GradientWindowScope();

   private:
    TrainingGraphBuilder& b_;
    const GradientWindow* outer_window_;
    double outer_share_;
  };
  // What a pass template recorded now holds of the collectives beside its compute (part of its key).
  std::uint64_t contention_key(int stage, const Chunk& chunk);
  // `work_id` with the share's SMs held, on the stage's GPUs.
  WorkId beside_collectives(int stage, WorkId work_id);
  double collective_sms_share_ = 0.0;                // SMs held by the collectives beside the ops added now
  const GradientWindow* gradient_window_ = nullptr;  // the window being emitted
  std::map<int, GradientWindow> gradient_windows_;   // by stage

  // Backward TP collectives run asynchronously on the TP stream; other ops stay on compute.
  static Lane backward_lane(const Step& step);

  // The weight gradient of one step; in a weight pass, its ops off the compute stream wait for
  // the pass's barrier `join`.
  PerPeer<OpId> emit_weight_grad(int stage, const Chunk& chunk, const PendingWeightGrad& weight, int mb,
                                 const PerPeer<OpId>& join = {});

  void emit_weight_pass(int stage, const Chunk& chunk, const PipelineAction& action, ForwardRecord& record,
                        std::vector<PendingWeightGrad>& pending);

  // The weight pass starts when every gradient it needs is there (the backward's asynchronous TP
  // collectives included), as a framework's W step does after waiting on them: a barrier on the
  // compute stream reads them all, and the pass's ops on other lanes wait for it.
  void weight_pass_body(int stage, const Chunk& chunk, const std::vector<PendingWeightGrad>& pending, int mb);

  // The op that last produced gradients of a step's parameters (its weight-gradient op, or for
  // fused kernels such as norms its backward op): the data-parallel reduction waits for it.
  // While a pass is recorded, they become the template's signals.
  void record_grad_op(const Chunk& chunk, std::size_t step, const PerPeer<OpId>& ops);

  // Where the gates of each step's last gradient are kept, to be overwritten by the next producer.
  std::vector<PerPeer<Gate>>& last_grad_gates(const Chunk& chunk);

  std::size_t chunk_index(const Chunk& chunk) const { return static_cast<std::size_t>(chunk.group / s_.parallel.pp); }

  // ---- Bamboo's redundant computation ---------------------------------------------------------

  // After the stage's forward of `mb`, its successor's forward from the stage's output `x` (on
  // the last stage: the first stage's forward of the microbatch), on the stage's compute stream.
  // What it saves is kept, whole, until the successor's backward of `mb` ends, as Oobleck's
  // evaluation of Bamboo holds it in GPU memory.
  void emit_redundant_forward(int stage, int mb, const PerPeer<TensorId>& x);
  // The stage's backward of `mb` just ended (last_compute_ops_).
  void note_backward_end(int stage, int mb);
  // Frees what `keeper`'s redundant forward of `mb` kept, once it and its successor's backward
  // of `mb` are both emitted: a barrier on a stream of its own, which holds nothing up.
  void release_redundant(int keeper, int mb);

  // ---- data parallelism and the optimizer -----------------------------------------------------

  std::int64_t bucket_parameters(int stage) const;

  // Buckets of parameters in the order the backward pass finishes them (last chunk's last step
  // first), each closed once it holds at least the bucket size.
  struct Bucket {
    std::int64_t parameters = 0;
    std::vector<std::pair<std::size_t, std::size_t>> steps;  // (chunk, step)
  };

  std::vector<Bucket> buckets(int stage) const;
  // The collective that reduces a bucket's gradients over data parallelism.
  OpWork bucket_reduction(const Bucket& bucket) const;

  void emit_gradient_reduction(int stage);

  // Hybrid sharding: the reduce-scatter of `gradient_bytes` over the shard group leaves each rank
  // its shard, which an all-reduce then sums over the groups that replicate it (FSDP's
  // HYBRID_SHARD); the ops wait for `reduce_scatter`. Only under hybrid sharding.
  PerPeer<OpId> reduce_over_shard_replicas(int stage, std::string_view name, Bytes gradient_bytes,
                                           const PerPeer<OpId>& reduce_scatter);
  // Its time, for what runs beside it; 0 without hybrid sharding.
  TimeNs shard_replica_reduction_time(int stage, Bytes gradient_bytes);
  // That all-reduce, placed on the stage's group of shard replicas.
  OpWork shard_replica_reduction(int stage, Bytes gradient_bytes);
  // The ranks that hold the same shard as the first peer of `stage`, one per shard group.
  std::uint32_t shard_replica_group(int stage);

  // ZeRO-1 all-gathers the updated parameters, bucket by bucket. Overlapped (Megatron's
  // --overlap-param-gather), the gather of the previous iteration's update runs at the start
  // of this one and each chunk's first forward waits for its buckets.
  void emit_param_gather(int stage);

  void after_param_gather(int chunk, const PerPeer<OpId>& first_forward);

  // Tied embeddings split over pipeline stages: the stage with the embedding (the first, in a
  // model of one module) and the last stage all-reduce the gradient of the shared table before
  // the optimizer steps.
  void emit_tied_embedding_sync(int replica);

  void emit_optimizer(int stage);

  double model_flops_per_iteration() const;

  struct StageTensors {
    PerPeer<TensorId> parameters;
    PerPeer<TensorId> gradients;
    PerPeer<TensorId> optimizer_states;
  };

  const TrainingScenario& s_;
  std::vector<std::uint8_t> recomputed_layers_;        // per layer of the model
  std::optional<MicrobatchShapes> microbatch_shapes_;  // per-sample data
  // Per-sample data: the slots' shares of image encoders on meshes of another DP (by that DP),
  // and by position the shapes of its replicas if not the last module's (null).
  std::map<int, MicrobatchShapes> module_replica_shapes_;
  std::vector<const MicrobatchShapes*> position_shapes_;
  int replicas_ = 1;  // DP replicas simulated one by one, at the position with the most
  std::vector<int> stage_position_, stage_replica_, stage_index_;  // stage_index_: by position, replica (-1: none)
  bool unfold_;
  bool name_ops_;
  bool composites_;
  ParallelDims dims_;
  ShardContext context_;
  SampleShape sample_;  // of the microbatch being emitted
  MultimodalModel model_;
  StageGraph graph_;
  int embedding_position_ = 0;  // the pipeline position holding the embedding table of the last module
  std::unique_ptr<ClusterCostModel> cost_;
  GraphBuilder outer_;
  GraphBuilder* b_ = &outer_;  // the template's while a pass is recorded
  bool split_weight_grads_ = false;
  std::vector<int> replica_dp_;                               // the DP replica each simulated one stands for
  std::map<std::pair<int, double>, DeviceSpecId> gpu_specs_;  // by node group and speed
  std::vector<int> stage_pace_;  // per stage: stages of one number have peers of equal types and speeds
  DeviceSpecId link_spec_;
  std::vector<SimulatedRank> ranks_;
  std::vector<PassOp> passes_;
  std::vector<std::vector<Peer>> stages_;
  // By microbatch shape, by pipeline position (built before shapes point into them).
  std::map<std::pair<SampleShape, int>, std::vector<std::vector<Chunk>>> chunks_;  // by shape and kernel set
  std::vector<KernelChoices> kernel_sets_;                                         // of the GPU types the stages run on
  std::vector<int> stage_kernels_;                                                 // per stage, its kernel set
  fmt::memory_buffer name_buffer_;
  std::string op_name_;
  struct WorkKeyHash {
    std::size_t operator()(const std::pair<const OpWork*, int>& key) const noexcept {
      return std::hash<const void*>{}(key.first) ^ (static_cast<std::size_t>(key.second) << 1);
    }
  };
  std::unordered_map<std::pair<const OpWork*, int>, WorkId, WorkKeyHash> work_ids_;
  std::vector<std::uint32_t> stage_groups_;          // by stage and communicator kind; 0 until placed
  std::vector<std::uint32_t> shard_replica_groups_;  // by stage; 0 until placed
  std::map<std::pair<int, CommGroupKind>, std::vector<std::vector<std::size_t>>> partitions_;
  std::map<std::pair<std::int64_t, std::int64_t>, StreamId> links_;
  std::vector<PerPeer<TensorId>> boundaries_;                    // of the replica being emitted: see boundary_tensor
  std::map<std::tuple<int, int, bool>, Relay> relays_;           // by (group, microbatch, backward)
  std::map<std::tuple<int, int, Bytes>, WorkId> transfer_work_;  // by (stage, stage it sends to, bytes)
  std::map<int, StageTensors> static_tensors_;
  std::map<int, std::vector<PerPeer<OpId>>> gradient_syncs_;
  std::map<int, PerPeer<OpId>> optimizer_ops_;
  std::map<int, PerPeer<OpId>> stage_last_compute_;
  PerPeer<OpId> last_compute_ops_;    // the latest op on the compute streams of the stage being emitted
  Bytes* redundant_saved_ = nullptr;  // while a redundant forward is emitted: the bytes it keeps
  std::map<std::pair<int, int>, PassValues> redundant_kept_;    // by (stage, microbatch)
  std::map<std::pair<int, int>, PerPeer<OpId>> backward_ends_;  // by (stage, microbatch)
  std::map<int, PerPeer<StreamId>> release_streams_;            // by stage
  // Per-sample data: the name and members of each data-parallel collective, by (position, n-th
  // on its stages), and how many each stage has had so far.
  std::map<std::pair<int, std::size_t>, std::pair<std::string, std::vector<OpId>>> replica_collectives_;
  std::vector<std::size_t> replica_collectives_of_stage_;
  // Passes as templates (composites_) by (chunk shape, phase; phases are string literals), and the
  // recording under way.
  // By shape, phase, pace and what collectives beside the pass hold (contention_key).
  std::map<std::tuple<std::size_t, std::string_view, int, std::uint64_t>, RecordedPass> pass_templates_;
  // A template of (shape, phase) at any pace: what its bundles look like.
  const PassTemplate* any_pass_template(std::size_t shape, std::string_view phase) const;
  std::map<std::pair<int, int>, StageTranslation> translations_;
  std::vector<StreamId> placed_streams_;  // scratch of instantiate
  std::vector<DeviceId> placed_devices_;
  BundleMemberHandles member_handles_;
  GroupTemplates layer_templates_;  // the templates of single layers, nested in pass templates
  // The weight gradients a backward pass leaves, as handles.
  std::map<std::size_t, std::vector<PendingWeightGrad>> weight_pass_inputs_;  // by chunk shape
  std::vector<const Chunk*> shapes_;                                          // a chunk of each shape
  PassRecorder* recorder_ = nullptr;
  int recording_stage_ = 0;
  std::vector<Peer> recording_peers_;
  // Per stage being emitted:
  std::vector<ForwardRecord> records_;
  std::vector<std::vector<PendingWeightGrad>> pending_;
  std::vector<std::vector<PerPeer<Gate>>> last_grad_op_;  // per chunk, per step
  std::vector<PerPeer<OpId>> first_forward_op_;           // per chunk
  std::vector<PerPeer<OpId>> param_gathers_;              // per bucket
  std::vector<std::vector<std::size_t>> param_gather_chunks_;
};

}  // namespace weft::training_graph
