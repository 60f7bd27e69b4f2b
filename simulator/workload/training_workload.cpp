#include "simulator/workload/training_workload.hpp"

#include <algorithm>
#include <charconv>
#include <map>
#include <numeric>
#include <unordered_map>

#include <fmt/format.h>

#include "simulator/graph/graph_builder.hpp"
#include "simulator/workload/model.hpp"
#include "simulator/workload/modules/op_factory.hpp"
#include "simulator/workload/pass_template.hpp"
#include "simulator/workload/per_peer.hpp"
#include "simulator/workload/pipeline_schedule.hpp"

namespace weft {
namespace {

// Bytes per parameter of the optimizer's fp32 master weights and Adam moments.
constexpr Bytes kOptimizerStateBytes = 12;
// Traffic of an Adam step per parameter: read gradient (2), master weight, m, v (12); write
// master weight, m, v (12) and the bf16 parameter (2).
constexpr Bytes kOptimizerTrafficBytes = 28;

enum class Lane : std::uint8_t { compute, tensor_parallel, data_parallel, context_parallel };
constexpr std::array<std::string_view, 4> kLaneNames{"compute", "tp comm", "dp comm", "cp comm"};

// One GPU of a pipeline stage and its streams. Forward TP and CP collectives run on the compute
// stream, synchronously as in Megatron; backward TP collectives on a TP stream, asynchronously
// (Megatron's linear layers all-gather the saved input during the input-gradient GEMM and
// reduce the input gradient during the weight-gradient GEMM); gradient and parameter
// collectives on their own stream so they overlap the backward pass; ring-attention transfers on
// another, overlapping attention.
struct Peer {
  std::int64_t rank = 0;
  RankCoordinates coordinates;
  DeviceId device;
  StreamId compute;
  StreamId tensor_parallel;
  StreamId data_parallel;
  StreamId context_parallel;
  std::size_t simulated_index = 0;  // into TrainingWorkload::ranks
  std::size_t index = 0;            // among its stage's peers
};

// What an op waits for: another op's end, or one of a composite's signals.
struct Gate {
  OpId op;
  std::int32_t signal = -1;
};

// A model chunk: the steps one rank runs for one virtual pipeline stage.
struct Chunk {
  int group = 0;  // virtual stage: chunk * pp + stage
  std::vector<Step> steps;
  std::vector<int> block;  // per step: the layer (or input/output block) it belongs to
  Bytes input_bytes = 0;   // activation entering the chunk; 0 for the first
  // Chunks of one shape (on any stage) do the same work and share the templates of their passes.
  std::size_t shape = 0;
};

// Whether two steps do the same work (their names aside).
bool same_work(const Step& a, const Step& b) {
  return a.forward == b.forward && a.backward == b.backward && a.weight_grad == b.weight_grad &&
         a.regather == b.regather && a.comm == b.comm && a.output_bytes == b.output_bytes &&
         a.saved_bytes == b.saved_bytes && a.recomputable_bytes == b.recomputable_bytes &&
         a.model_flops == b.model_flops && a.parameters == b.parameters && a.attention_core == b.attention_core &&
         a.context_parallel_chunks == b.context_parallel_chunks && a.context_parallel_bytes == b.context_parallel_bytes;
}

// With passes as composites, what one pass leaves for another travels in a bundle: these are
// the routes, and a member is named by what it is and the step it belongs to.
enum class Route : std::uint32_t {
  forward_to_backward,
  forward_to_recompute,
  forward_to_weight,
  recompute_to_backward,
  recompute_to_weight,
  backward_to_weight,
};
constexpr std::size_t kRouteCount = 6;
// The bundle tensors of one microbatch's passes of a chunk, by route (empty: no such bundle).
using BundleSet = std::array<PerPeer<TensorId>, kRouteCount>;

enum class Kept : std::uint32_t { saved, checkpoint, recomputed, output_grad };
constexpr std::uint32_t member_key(Kept what, std::size_t step) {
  return static_cast<std::uint32_t>(step) * 4 + static_cast<std::uint32_t>(what);
}

// What a chunk's forward pass of one microbatch left for its backward and weight passes.
struct ForwardRecord {
  std::vector<PerPeer<TensorId>> saved;       // per step (empty: nothing saved)
  std::vector<PerPeer<TensorId>> checkpoint;  // per step: layer input kept by full recompute
  PerPeer<TensorId> output;                   // the loss, on the last chunk
  BundleSet bundles;                          // with passes as composites, instead of the above
  PerPeer<TensorId> output_grad;              // with passes as composites: the backward's incoming gradient
};

// A weight-gradient op waiting for its weight pass (zero-bubble schedules).
struct PendingWeightGrad {
  std::size_t step = 0;
  PerPeer<TensorId> output_grad;
  PerPeer<TensorId> input;
};

struct BoundaryKey {
  int group = 0;  // the sending side of a forward boundary, the receiving side of a backward one
  int microbatch = 0;
  bool backward = false;
};

class TrainingGraphBuilder {
 public:
  TrainingGraphBuilder(const TrainingScenario& scenario, const WorkloadOptions& options)
      : s_(scenario),
        unfold_(options.unfold),
        name_ops_(options.name_ops),
        composites_(options.composites),
        model_(scenario.model, scenario.parallel.cp_algorithm),
        cost_(std::make_unique<ClusterCostModel>(scenario.cluster)) {
    const ParallelPlan& plan = scenario.parallel;
    dims_ = {plan.tp, plan.cp, plan.dp, plan.pp};
    context_.tp = plan.tp;
    context_.cp = plan.cp;
    context_.sequence_parallel = plan.sequence_parallel && plan.tp > 1;
    context_.micro_batch = scenario.training.micro_batch;
    context_.seq_len = scenario.training.seq_len;
    context_.dtype = scenario.training.dtype;
    cost_->set_ideal_network(scenario.options.ideal_network);
    cost_->force_algorithm(scenario.options.collective_algorithm);
    split_weight_grads_ = splits_weight_gradients(plan.schedule);
  }

  TrainingWorkload build() {
    create_ranks();
    create_chunks();
    for (int stage = 0; stage < s_.parallel.pp; ++stage) create_static_tensors(stage);
    for (int stage = 0; stage < s_.parallel.pp; ++stage) emit_stage(stage);
    emit_tied_embedding_sync();
    for (int stage = 0; stage < s_.parallel.pp; ++stage) emit_optimizer(stage);
    TrainingWorkload workload;
    workload.graph = std::move(outer_).build();
    workload.cost_model = std::move(cost_);
    workload.ranks = std::move(ranks_);
    workload.folded = !unfold_;
    workload.microbatches = s_.microbatches();
    workload.model_flops_per_iteration = model_flops_per_iteration();
    return workload;
  }

 private:
  // ---- ranks, streams and links -------------------------------------------------------------

  void create_ranks() {
    DeviceSpec link;
    link.name = "p2p-link";
    link.kind = DeviceKind::link;
    gpu_spec_ = b_->add_device_spec(s_.cluster.gpu);
    link_spec_ = b_->add_device_spec(link);
    stages_.resize(static_cast<std::size_t>(s_.parallel.pp));
    stage_groups_.assign(static_cast<std::size_t>(s_.parallel.pp) * kCommGroupKindCount, 0);
    for (int stage = 0; stage < s_.parallel.pp; ++stage) {
      for (int dp = 0; dp < (unfold_ ? dims_.dp : 1); ++dp) {
        for (int cp = 0; cp < (unfold_ ? dims_.cp : 1); ++cp) {
          for (int tp = 0; tp < (unfold_ ? dims_.tp : 1); ++tp) add_peer({tp, cp, dp, stage});
        }
      }
    }
  }

  void add_peer(const RankCoordinates& c) {
    Peer peer;
    peer.coordinates = c;
    peer.rank = dims_.rank_of(c);
    std::string label = fmt::format("stage {} / tp {}", c.pp, c.tp);
    if (dims_.cp > 1) label += fmt::format(" / cp {}", c.cp);
    label += fmt::format(" / dp {}", c.dp);
    peer.device = b_->add_device(label, gpu_spec_);
    peer.compute = b_->add_stream(peer.device, "compute");
    peer.tensor_parallel = b_->add_stream(peer.device, "tp comm");
    peer.data_parallel = b_->add_stream(peer.device, "dp comm");
    peer.context_parallel = b_->add_stream(peer.device, "cp comm");
    peer.simulated_index = ranks_.size();
    peer.index = stages_[static_cast<std::size_t>(c.pp)].size();
    SimulatedRank rank;
    rank.rank = peer.rank;
    rank.coordinates = c;
    rank.device = peer.device;
    ranks_.push_back(rank);
    stages_[static_cast<std::size_t>(c.pp)].push_back(peer);
  }

  // The link carrying point-to-point traffic from one rank to another, created on first use.
  StreamId link(const Peer& from, const Peer& to) {
    const auto key = std::make_pair(from.rank, to.rank);
    if (auto it = links_.find(key); it != links_.end()) return it->second;
    const DeviceId device = b_->add_device(
        fmt::format("p2p stage {} -> {} (rank {} -> {})", from.coordinates.pp, to.coordinates.pp, from.rank, to.rank),
        link_spec_);
    const StreamId stream = b_->add_stream(device, "transfer", StreamPolicy::first_ready);
    ranks_[from.simulated_index].links.push_back(device);
    ranks_[to.simulated_index].links.push_back(device);
    links_.emplace(key, stream);
    return stream;
  }

  // ---- communicators ------------------------------------------------------------------------

  // The placement of the `kind` communicator of rank `c` (all of a stage's groups of one kind
  // have the same shape in Megatron's rank order).
  std::uint32_t group_id(CommGroupKind kind, const RankCoordinates& c) {
    std::vector<std::int64_t> ranks;
    auto add = [&](RankCoordinates member) { ranks.push_back(dims_.rank_of(member)); };
    switch (kind) {
      case CommGroupKind::tp:
        for (int tp = 0; tp < dims_.tp; ++tp) add({tp, c.cp, c.dp, c.pp});
        break;
      case CommGroupKind::cp:
        for (int cp = 0; cp < dims_.cp; ++cp) add({c.tp, cp, c.dp, c.pp});
        break;
      case CommGroupKind::dp:  // gradients are reduced over data and context parallel ranks
        for (int dp = 0; dp < dims_.dp; ++dp) {
          for (int cp = 0; cp < dims_.cp; ++cp) add({c.tp, cp, dp, c.pp});
        }
        break;
      case CommGroupKind::pp:
      case CommGroupKind::embedding:
        add(c);
        add({c.tp, c.cp, c.dp, kind == CommGroupKind::embedding ? dims_.pp - 1 : c.pp + 1});
        break;
    }
    return cost_->add_group(make_comm_group(kind, ranks, s_.cluster));
  }

  std::uint32_t point_to_point_group(CommGroupKind kind, std::int64_t from, std::int64_t to) {
    const std::array<std::int64_t, 2> ranks{from, to};
    return cost_->add_group(make_comm_group(kind, ranks, s_.cluster));
  }

  // Peers that form one `kind` collective together: equal coordinates outside its dimensions.
  // Computed once per stage and kind.
  const std::vector<std::vector<std::size_t>>& partition(int stage, CommGroupKind kind) {
    auto& cached = partitions_[{stage, kind}];
    if (!cached.empty()) return cached;
    std::map<std::pair<int, int>, std::vector<std::size_t>> groups;
    const auto& peers = stages_[static_cast<std::size_t>(stage)];
    for (std::size_t i = 0; i < peers.size(); ++i) {
      const RankCoordinates& c = peers[i].coordinates;
      const std::pair<int, int> key = kind == CommGroupKind::tp   ? std::make_pair(c.cp, c.dp)
                                      : kind == CommGroupKind::cp ? std::make_pair(c.tp, c.dp)
                                                                  : std::make_pair(c.tp, 0);
      groups[key].push_back(i);
    }
    for (auto& [key, members] : groups) cached.push_back(std::move(members));
    return cached;
  }

  // ---- ops and tensors on every peer of a stage ---------------------------------------------

  // Communication ops carry their communicator; a step's compute ops do not.
  WorkId placed_work(const OpWork& base, std::optional<CommGroupKind> kind, int stage) {
    if (!kind || category_of(base.op_class) != OpCategory::communication) return b_->intern_work(base);
    OpWork copy = base;
    copy.comm_group = stage_group(*kind, stage);
    return b_->intern_work(copy);
  }

  // The work of a chunk step (which outlives the build), remembered by address so that every
  // microbatch reuses its id without hashing the work again.
  WorkId step_work(const OpWork& step_work, std::optional<CommGroupKind> kind, int stage) {
    if (recorder_ != nullptr) return placed_work(step_work, kind, stage);  // another graph's ids
    const auto key = std::make_pair(&step_work, kind ? stage : -1);
    if (auto it = work_ids_.find(key); it != work_ids_.end()) return it->second;
    const WorkId id = placed_work(step_work, kind, stage);
    work_ids_.emplace(key, id);
    return id;
  }

  // The communicator of `kind` for the peers of `stage`, placed once per stage and kind.
  std::uint32_t stage_group(CommGroupKind kind, int stage) {
    std::uint32_t& id =
        stage_groups_[static_cast<std::size_t>(stage) * kCommGroupKindCount + static_cast<std::size_t>(kind)];
    if (id == 0) id = group_id(kind, stages_[static_cast<std::size_t>(stage)].front().coordinates);
    return id;
  }

  // The stream of `lane` on `peer`; while a pass is recorded, the template's stream standing
  // for it.
  StreamId lane_stream(const Peer& peer, Lane lane) {
    if (recorder_ == nullptr) return outer_lane_stream(peer, lane);
    const Peer& outer = stages_[static_cast<std::size_t>(recording_stage_)][peer.index];
    return recorder_->stream(outer_lane_stream(outer, lane), peer.index, kLaneNames[static_cast<std::size_t>(lane)]);
  }

  static StreamId outer_lane_stream(const Peer& peer, Lane lane) {
    switch (lane) {
      case Lane::compute:
        return peer.compute;
      case Lane::tensor_parallel:
        return peer.tensor_parallel;
      case Lane::data_parallel:
        return peer.data_parallel;
      case Lane::context_parallel:
        return peer.context_parallel;
    }
    return peer.compute;
  }

  // The peers of `stage`: while one of its passes is recorded, the template's.
  const std::vector<Peer>& peers(int stage) const {
    return recorder_ != nullptr ? recording_peers_ : stages_[static_cast<std::size_t>(stage)];
  }

  // The same op on every peer of `stage`; collectives of more than one simulated member are
  // grouped with their peers.
  PerPeer<OpId> add_ops(int stage, std::string_view name, WorkId work_id, std::optional<CommGroupKind> kind,
                        Lane lane = Lane::compute) {
    const NameId name_id = b_->intern_name(name);
    const OpClass op_class = b_->work(work_id).op_class;
    const auto& stage_peers = peers(stage);
    PerPeer<OpId> ops;
    ops.reserve(stage_peers.size());
    for (const Peer& peer : stage_peers) ops.push_back(b_->add_op(name_id, work_id, lane_stream(peer, lane)));
    if (lane == Lane::compute && recorder_ == nullptr) last_compute_ops_ = ops;
    // Collectives among a stage's peers; the embedding group spans stages and its caller groups it.
    if (kind && *kind != CommGroupKind::embedding && is_collective_class(op_class) && stage_peers.size() > 1) {
      std::vector<OpId> group;
      for (const auto& members : partition(stage, *kind)) {
        if (members.size() < 2) continue;
        group.clear();
        for (std::size_t i : members) group.push_back(ops[i]);
        b_->add_collective(name, group);
      }
    }
    return ops;
  }

  PerPeer<TensorId> add_tensors(int stage, Bytes bytes, TensorKind kind, std::string_view name = {}) {
    PerPeer<TensorId> tensors;
    for (const Peer& peer : peers(stage)) {
      const TensorId tensor = b_->add_tensor(name, peer.device, kind, bytes);
      tensors.push_back(recorder_ != nullptr ? PassRecorder::tag(tensor) : tensor);
    }
    return tensors;
  }

  void consume(const PerPeer<OpId>& ops, const PerPeer<TensorId>& tensors) {
    if (tensors.empty()) return;
    for (std::size_t i = 0; i < ops.size(); ++i) {
      b_->add_input(ops[i], recorder_ != nullptr ? recorder_->read(tensors[i]) : tensors[i]);
    }
  }

  void produce(const PerPeer<OpId>& ops, const PerPeer<TensorId>& tensors) {
    if (tensors.empty()) return;
    for (std::size_t i = 0; i < ops.size(); ++i) {
      b_->add_output(ops[i], recorder_ != nullptr ? recorder_->write(tensors[i]) : tensors[i]);
    }
  }

  void after(const PerPeer<OpId>& before, const PerPeer<OpId>& ops) {
    if (before.empty()) return;
    for (std::size_t i = 0; i < ops.size(); ++i) b_->add_control_edge(before[i], ops[i]);
  }

  void after(const PerPeer<Gate>& before, const PerPeer<OpId>& ops) {
    if (before.empty()) return;
    for (std::size_t i = 0; i < ops.size(); ++i) {
      if (before[i].signal >= 0) {
        b_->add_signal_edge(before[i].op, static_cast<std::uint32_t>(before[i].signal), ops[i]);
      } else {
        b_->add_control_edge(before[i].op, ops[i]);
      }
    }
  }

  // ---- the model, cut into chunks -----------------------------------------------------------

  int stage_of_group(int group) const { return group % s_.parallel.pp; }
  int group_count() const { return s_.parallel.pp * s_.parallel.vpp; }

  void create_chunks() {
    const std::vector<int> layers = s_.layers_per_virtual_stage();
    std::vector<int> first_layer(layers.size() + 1, 0);
    std::partial_sum(layers.begin(), layers.end(), first_layer.begin() + 1);
    const bool head_shares_embedding = s_.model.tied_embeddings && s_.parallel.pp == 1;
    const int last_group = group_count() - 1;
    chunks_.assign(static_cast<std::size_t>(s_.parallel.pp), {});
    for (int group = 0; group < group_count(); ++group) {
      Chunk chunk;
      chunk.group = group;
      auto append = [&](std::vector<Step> steps, int block) {
        for (Step& step : steps) {
          chunk.steps.push_back(std::move(step));
          chunk.block.push_back(block);
        }
      };
      if (group == 0) append(model_.input_steps(context_), -1);
      for (int layer = first_layer[static_cast<std::size_t>(group)];
           layer < first_layer[static_cast<std::size_t>(group) + 1]; ++layer) {
        append(model_.layer_steps(context_, layer), layer);
      }
      if (group == last_group) append(model_.output_steps(context_, head_shares_embedding), s_.model.layers);
      chunk.input_bytes = group == 0 ? 0 : boundary_bytes();
      chunks_[static_cast<std::size_t>(stage_of_group(group))].push_back(std::move(chunk));
    }
    for (auto& stage_chunks : chunks_) {
      for (Chunk& chunk : stage_chunks) chunk.shape = shape_of(chunk);
    }
  }

  // The shape of a chunk: an earlier chunk's if both do the same work in the same layers, the
  // first and last virtual stages apart (they hold the model's ends); a new one otherwise.
  // Named ops name their layers, so then every chunk has a shape of its own.
  std::size_t shape_of(const Chunk& chunk) {
    auto block_kind = [&](const Chunk& c, std::size_t i) { return c.block[i] - (is_layer(c, i) ? c.block[0] : 0); };
    auto same = [&](const Chunk* other) {
      const bool ends_match = (other->group == 0) == (chunk.group == 0) &&
                              (other->group == group_count() - 1) == (chunk.group == group_count() - 1);
      if (!ends_match || other->steps.size() != chunk.steps.size() || other->input_bytes != chunk.input_bytes)
        return false;
      for (std::size_t i = 0; i < chunk.steps.size(); ++i) {
        if (!same_work(other->steps[i], chunk.steps[i]) || block_kind(*other, i) != block_kind(chunk, i)) return false;
      }
      return true;
    };
    if (!name_ops_) {
      for (std::size_t s = 0; s < shapes_.size(); ++s) {
        if (same(shapes_[s])) return s;
      }
    }
    shapes_.push_back(&chunk);
    return shapes_.size() - 1;
  }

  // The activation passed between pipeline stages: a layer's output on the rank's shard of tokens.
  Bytes boundary_bytes() const { return context_.sharded_tokens() * s_.model.hidden * context_.element_bytes(); }

  std::int64_t stage_parameters(int stage) const {
    std::int64_t total = 0;
    for (const Chunk& chunk : chunks_[static_cast<std::size_t>(stage)]) {
      for (const Step& step : chunk.steps) total += step.parameters;
    }
    return total;
  }

  int optimizer_shards() const { return s_.parallel.zero == 1 ? s_.parallel.dp * s_.parallel.cp : 1; }

  void create_static_tensors(int stage) {
    const std::int64_t parameters = stage_parameters(stage);
    StaticMemory memory;
    memory.parameters = 2 * parameters;
    memory.gradients = 2 * parameters;
    memory.optimizer_states = kOptimizerStateBytes * parameters / optimizer_shards();
    memory.framework_overhead = s_.options.framework_overhead;
    auto& tensors = static_tensors_[stage];
    tensors.parameters = add_tensors(stage, memory.parameters, TensorKind::parameter, "parameters");
    tensors.gradients = add_tensors(stage, memory.gradients, TensorKind::gradient, "gradients");
    tensors.optimizer_states =
        add_tensors(stage, memory.optimizer_states, TensorKind::optimizer_state, "optimizer states");
    if (memory.framework_overhead > 0) {
      add_tensors(stage, memory.framework_overhead, TensorKind::buffer, "framework overhead");
    }
    for (const Peer& peer : stages_[static_cast<std::size_t>(stage)]) {
      ranks_[peer.simulated_index].static_memory = memory;
      ranks_[peer.simulated_index].parameters = parameters;
    }
  }

  // ---- one stage: its schedule ----------------------------------------------------------------

  void emit_stage(int stage) {
    const int pp = s_.parallel.pp;
    const int microbatches = static_cast<int>(s_.microbatches());
    auto& chunks = chunks_[static_cast<std::size_t>(stage)];
    records_.assign(chunks.size() * static_cast<std::size_t>(microbatches), {});
    pending_.assign(records_.size(), {});
    last_grad_op_.assign(chunks.size(), {});
    first_forward_op_.assign(chunks.size(), {});
    if (s_.parallel.zero == 1 && s_.options.overlap_param_gather) emit_param_gather(stage);
    for (const PipelineAction& action :
         pipeline_actions(s_.parallel.schedule, stage, pp, s_.parallel.vpp, microbatches)) {
      const std::size_t slot = static_cast<std::size_t>(action.chunk) * static_cast<std::size_t>(microbatches) +
                               static_cast<std::size_t>(action.microbatch);
      Chunk& chunk = chunks[static_cast<std::size_t>(action.chunk)];
      switch (action.kind) {
        case PassKind::forward:
          emit_forward(stage, chunk, action, records_[slot]);
          break;
        case PassKind::backward:
          emit_backward(stage, chunk, action, records_[slot], pending_[slot]);
          break;
        case PassKind::weight:
          emit_weight_pass(stage, chunk, action, records_[slot], pending_[slot]);
          break;
      }
    }
    stage_last_compute_[stage] = last_compute_ops_;
    emit_gradient_reduction(stage);
  }

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
  std::string_view op_name(const Step& step, std::string_view phase, int microbatch) {
    if (!name_ops_) return {};
    op_name_.assign(step.name);
    op_name_ += ' ';
    op_name_ += phase;
    if (microbatch < 0) return op_name_;  // a template's: its composite names the microbatch
    op_name_ += " mb";
    char digits[16];
    const auto end = std::to_chars(digits, digits + sizeof(digits), microbatch).ptr;
    op_name_.append(digits, end);
    return op_name_;
  }

  // " mb<microbatch>", or nothing in a template (microbatch -1) or when ops are not named.
  std::string mb_suffix(int microbatch) const {
    return microbatch < 0 || !name_ops_ ? std::string() : fmt::format(" mb{}", microbatch);
  }

  // ---- forward --------------------------------------------------------------------------------

  void emit_forward(int stage, Chunk& chunk, const PipelineAction& action, ForwardRecord& record) {
    const int mb = action.microbatch;
    PerPeer<TensorId> x;
    if (chunk.group > 0) x = boundary_tensor({chunk.group - 1, mb, false}, stage);
    PerPeer<OpId> first_op;
    if (composites_) {
      // Escaping: the output; what the steps saved and checkpointed leaves in bundles.
      PassValues escapes;
      first_op = emit_pass(
          stage, chunk, "fwd", mb, PassValues{x}, escapes, record.bundles, [&](std::vector<PassBundle>& leaving) {
            ForwardRecord inner;
            forward_body(stage, chunk, x, -1, inner);
            for (std::size_t k = 0; k < chunk.steps.size(); ++k) {
              leave(leaving, route_of_saved(chunk, k, Route::forward_to_backward), member_key(Kept::saved, k),
                    inner.saved[k]);
              leave(leaving, route_of_checkpoint(chunk, k), member_key(Kept::checkpoint, k), inner.checkpoint[k]);
            }
            return PassValues{inner.output};
          });
      record.output = escapes[0];
    } else {
      first_op = forward_body(stage, chunk, x, mb, record);
    }
    if (first_forward_op_[static_cast<std::size_t>(action.chunk)].empty()) {
      first_forward_op_[static_cast<std::size_t>(action.chunk)] = first_op;
      after_param_gather(action.chunk, first_op);
    }
    if (chunk.group + 1 < group_count()) {
      send(stage, chunk.group + 1, {chunk.group, mb, false}, record.output, "activation");
      record.output = {};
    }
  }

  // The chunk's forward pass of a microbatch from input `x`: fills record (output, saved tensors,
  // checkpoints) and returns its first ops.
  PerPeer<OpId> forward_body(int stage, const Chunk& chunk, PerPeer<TensorId> x, int mb, ForwardRecord& record) {
    const bool full_recompute = s_.parallel.recompute == RecomputePolicy::full;
    const bool selective = s_.parallel.recompute == RecomputePolicy::selective;
    record.saved.assign(chunk.steps.size(), {});
    record.checkpoint.assign(chunk.steps.size(), {});
    PerPeer<OpId> first_op;
    for (std::size_t i = 0; i < chunk.steps.size(); ++i) {
      const Step& step = chunk.steps[i];
      if (!step.forward) continue;
      const bool layer_start = full_recompute && is_layer(chunk, i) && (i == 0 || chunk.block[i - 1] != chunk.block[i]);
      PerPeer<OpId> ops;
      PerPeer<TensorId> out = add_tensors(stage, step.output_bytes, TensorKind::activation);
      if (step.context_parallel_chunks > 1) {
        ops = emit_ring_attention(stage, step, step.forward.value(), "fwd", mb, x, 1);
      } else {
        ops = add_ops(stage, op_name(step, "fwd", mb), step_work(*step.forward, step.comm, stage), step.comm);
        consume(ops, x);
      }
      produce(ops, out);
      const bool keeps_saved = !(full_recompute && is_layer(chunk, i));
      const Bytes saved = step.saved_bytes - (selective ? step.recomputable_bytes : 0);
      if (keeps_saved && saved > 0) {
        record.saved[i] = add_tensors(stage, saved, TensorKind::activation);
        produce(ops, record.saved[i]);
      }
      if (layer_start) {
        record.checkpoint[i] = add_tensors(stage, boundary_bytes(), TensorKind::activation);
        produce(ops, record.checkpoint[i]);
      }
      if (first_op.empty()) first_op = ops;
      x = std::move(out);
    }
    record.output = std::move(x);
    return first_op;
  }

  // ---- passes as composites -------------------------------------------------------------------

  // A composite of the chunk's pass `phase` for microbatch `mb`, standing on every peer of the
  // stage, from `inputs` and the bundles of `bundles` routed to it (which it takes); fills
  // `escapes`, adds the bundles it leaves to `bundles`, and returns the composite on every peer.
  template <class Body>
  PerPeer<OpId> emit_pass(int stage, const Chunk& chunk, std::string_view phase, int mb, PassValues inputs,
                          PassValues& escapes, BundleSet& bundles, Body&& body) {
    std::vector<Route> taken;
    for (std::size_t r = 0; r < kRouteCount; ++r) {
      if (!bundles[r].empty() && phase_taking(static_cast<Route>(r)) == phase) {
        taken.push_back(static_cast<Route>(r));
        inputs.push_back(bundles[r]);
      }
    }
    const PassTemplate& pass = pass_template(stage, chunk, phase, inputs, [&](std::vector<PassBundle>& leaving) {
      for (Route route : taken) {
        recorder_->take_bundle(bundles[static_cast<std::size_t>(route)], bundle_shape(stage, chunk, route));
      }
      return body(leaving);
    });
    PassValues left;
    const PerPeer<OpId> ops = instantiate(stage, chunk, pass, phase, mb, inputs, escapes, left);
    for (std::size_t b = 0; b < pass.bundles.size(); ++b) bundles[pass.bundles[b].route] = std::move(left[b]);
    return ops;
  }

  // The pass that takes the bundles of `route`, and the pass that leaves them.
  static std::string_view phase_taking(Route route) {
    switch (route) {
      case Route::forward_to_backward:
      case Route::recompute_to_backward:
        return "bwd";
      case Route::forward_to_recompute:
        return "recompute";
      case Route::forward_to_weight:
      case Route::recompute_to_weight:
      case Route::backward_to_weight:
        return "weight";
    }
    return {};
  }
  static std::string_view phase_leaving(Route route) {
    switch (route) {
      case Route::forward_to_backward:
      case Route::forward_to_recompute:
      case Route::forward_to_weight:
        return "fwd";
      case Route::recompute_to_backward:
      case Route::recompute_to_weight:
        return "recompute";
      case Route::backward_to_weight:
        return "bwd";
    }
    return {};
  }

  // The members of `route`'s bundles, as the pass leaving them recorded them.
  const PassTemplate::BundleShape& bundle_shape(int stage, const Chunk& chunk, Route route) const {
    const PassTemplate& from = pass_templates_.at(std::make_tuple(stage, chunk.group, phase_leaving(route)));
    for (const PassTemplate::BundleShape& shape : from.bundles) {
      if (shape.route == static_cast<std::uint32_t>(route)) return shape;
    }
    throw std::logic_error("no bundle on the route asked for");
  }

  // Adds `value` (a tensor per peer, or nothing) to the bundle of `route` that a pass leaves, as
  // member `key`; returns the key it is a member under (an earlier one if it is already in).
  static std::uint32_t leave(std::vector<PassBundle>& leaving, Route route, std::uint32_t key,
                             const PerPeer<TensorId>& value) {
    if (value.empty()) return key;
    auto bundle = std::find_if(leaving.begin(), leaving.end(),
                               [&](const PassBundle& b) { return b.route == static_cast<std::uint32_t>(route); });
    if (bundle == leaving.end()) {
      bundle = leaving.insert(leaving.end(), PassBundle{static_cast<std::uint32_t>(route), {}});
      bundle->members.resize(value.size());
    }
    const auto& first_peer = bundle->members.front();
    auto known =
        std::find_if(first_peer.begin(), first_peer.end(), [&](const auto& m) { return m.second == value[0]; });
    if (known != first_peer.end()) return known->first;
    for (std::size_t peer = 0; peer < value.size(); ++peer) bundle->members[peer].emplace_back(key, value[peer]);
    return key;
  }

  // Where what step `k` saved goes: to the weight pass if its weight gradient waits for one,
  // else to the backward pass.
  Route route_of_saved(const Chunk& chunk, std::size_t k, Route to_backward) const {
    const bool to_weight = split_weight_grads_ && chunk.steps[k].weight_grad;
    if (!to_weight) return to_backward;
    return to_backward == Route::forward_to_backward ? Route::forward_to_weight : Route::recompute_to_weight;
  }

  // The checkpoints of the chunk's last layer go to its own recompute pass; the others to the
  // backward pass, which recomputes those layers itself.
  Route route_of_checkpoint(const Chunk& chunk, std::size_t k) const {
    const bool own_pass = recomputes_before_gradient(chunk) && chunk.block[k] == chunk.block.back();
    return own_pass ? Route::forward_to_recompute : Route::forward_to_backward;
  }

  // Handles of the members of the bundles a chunk's pass leaves, by step, for the passes that
  // take them to read: (what) -> per step, a handle per peer.
  std::vector<PerPeer<TensorId>> member_handles(int stage, const Chunk& chunk, std::string_view phase, Kept what) {
    std::vector<PerPeer<TensorId>> handles(chunk.steps.size());
    const auto it = pass_templates_.find(std::make_tuple(stage, chunk.group, phase));
    if (it == pass_templates_.end()) return handles;
    for (const PassTemplate::BundleShape& shape : it->second.bundles) {
      for (std::size_t peer = 0; peer < shape.members.size(); ++peer) {
        for (const auto& [key, kind, bytes] : shape.members[peer]) {
          if (key % 4 != static_cast<std::uint32_t>(what)) continue;
          handles[key / 4].push_back(member_handles_.handle(key, static_cast<std::uint32_t>(peer)));
        }
      }
    }
    return handles;
  }

  // The template of a chunk's pass, recorded on first use by running `body` (which returns the
  // escaping values and fills the bundles it leaves) with the pass's ops going into the template.
  template <class Body>
  const PassTemplate& pass_template(int stage, const Chunk& chunk, std::string_view phase, const PassValues& inputs,
                                    Body&& body) {
    const auto key = std::make_tuple(stage, chunk.group, phase);
    if (auto it = pass_templates_.find(key); it != pass_templates_.end()) return it->second;
    if (auto it = templates_by_shape_.find({chunk.shape, phase}); it != templates_by_shape_.end()) {
      const auto& [recorded_stage, recorded] = it->second;
      return pass_templates_.emplace(key, rebound(*recorded, recorded_stage, stage)).first->second;
    }
    std::vector<DeviceId> devices;
    for (const Peer& peer : stages_[static_cast<std::size_t>(stage)]) devices.push_back(peer.device);
    PassRecorder recorder(fmt::format("{} chunk {}", phase, chunk.group), s_.cluster.gpu, devices, outer_,
                          member_handles_);
    recording_peers_ = stages_[static_cast<std::size_t>(stage)];
    for (Peer& peer : recording_peers_) {
      peer.device = recorder.device(peer.index);
      peer.compute = peer.tensor_parallel = peer.data_parallel = peer.context_parallel = StreamId::none();
    }
    recorder_ = &recorder;
    recording_stage_ = stage;
    b_ = &recorder.builder();
    std::vector<PassBundle> leaving;
    const PassValues escapes = body(leaving);
    b_ = &outer_;
    recorder_ = nullptr;
    const PassTemplate& made =
        pass_templates_.emplace(key, std::move(recorder).finish(outer_, inputs, escapes, leaving)).first->second;
    templates_by_shape_.emplace(std::make_pair(chunk.shape, phase), std::make_pair(stage, &made));
    return made;
  }

  // A pass template recorded on stage `from`, on the streams and devices of stage `to`.
  PassTemplate rebound(const PassTemplate& recorded, int from, int to) const {
    const auto& from_peers = stages_[static_cast<std::size_t>(from)];
    const auto& to_peers = stages_[static_cast<std::size_t>(to)];
    PassTemplate pass = recorded;
    for (StreamId& stream : pass.streams) {
      for (std::size_t i = 0; i < from_peers.size(); ++i) {
        for (Lane lane : {Lane::compute, Lane::tensor_parallel, Lane::data_parallel, Lane::context_parallel}) {
          if (outer_lane_stream(from_peers[i], lane) == stream) stream = outer_lane_stream(to_peers[i], lane);
        }
      }
    }
    for (PassTemplate::OutputShape& output : pass.outputs) {
      for (std::size_t i = 0; i < from_peers.size(); ++i) {
        if (from_peers[i].device == output.device) output.device = to_peers[i].device;
      }
    }
    return pass;
  }

  // A composite of `pass` for microbatch `mb`; the ops after it on the compute streams and the
  // gradient reduction wait for it.
  PerPeer<OpId> instantiate(int stage, const Chunk& chunk, const PassTemplate& pass, std::string_view phase, int mb,
                            const PassValues& inputs, PassValues& escapes, PassValues& bundles) {
    const OpId op =
        pass.instantiate(outer_, name("chunk {} mb{} {}", chunk.group, mb, phase), inputs, escapes, bundles);
    const PerPeer<OpId> ops(stages_[static_cast<std::size_t>(stage)].size(), op);
    last_compute_ops_ = ops;
    for (const auto& [step, signals] : pass.signals) {
      PerPeer<Gate> gates;
      for (std::uint32_t signal : signals) gates.push_back({op, static_cast<std::int32_t>(signal)});
      record_grad_gates(chunk, step, gates);
    }
    return ops;
  }

  bool is_layer(const Chunk& chunk, std::size_t step) const {
    return chunk.block[step] >= 0 && chunk.block[step] < s_.model.layers;
  }

  // Ring attention: the chunk's attention in `context_parallel_chunks` parts, each after the keys
  // and values of the next CP rank arrive over the CP stream. Returns the ops whose end is the
  // step's end (the last part). Backward sends twice the bytes (keys/values and their gradients).
  PerPeer<OpId> emit_ring_attention(int stage, const Step& step, const OpWork& whole, std::string_view phase, int mb,
                                    const PerPeer<TensorId>& input, int traffic_factor) {
    const int parts = step.context_parallel_chunks;
    OpWork part = whole;
    part.flops /= parts;
    part.memory_bytes /= parts;
    const WorkId part_work = b_->intern_work(part);
    const RankCoordinates& first = stages_[static_cast<std::size_t>(stage)].front().coordinates;
    const std::uint32_t neighbour_group =
        point_to_point_group(CommGroupKind::cp, stages_[static_cast<std::size_t>(stage)].front().rank,
                             dims_.rank_of({first.tp, (first.cp + 1) % dims_.cp, first.dp, first.pp}));
    OpWork transfer = {};
    transfer.op_class = OpClass::send;
    transfer.network_bytes = step.context_parallel_bytes * traffic_factor;
    transfer.shape = {transfer.network_bytes};
    transfer.comm_group = neighbour_group;
    PerPeer<TensorId> received = input;
    PerPeer<OpId> last;
    for (int j = 0; j < parts; ++j) {
      PerPeer<OpId> compute = add_ops(stage, name("{} {}{} part {}/{}", step.name, phase, mb_suffix(mb), j + 1, parts),
                                      part_work, std::nullopt);
      consume(compute, j == 0 ? input : received);
      if (j + 1 < parts) {
        const NameId send_name =
            b_->intern_name(name("{} kv send{} {}/{}", step.name, mb_suffix(mb), j + 1, parts - 1));
        const WorkId work_id = b_->intern_work(transfer);
        PerPeer<OpId> sends;
        for (const Peer& peer : peers(stage)) {
          sends.push_back(b_->add_op(send_name, work_id, lane_stream(peer, Lane::context_parallel)));
        }
        consume(sends, received);
        // The next CP rank's chunk arrives; its sender mirrors this one (the same op on a
        // simulated neighbour, or, folded, this rank by symmetry).
        PerPeer<TensorId> next = add_tensors(stage, step.context_parallel_bytes, TensorKind::buffer);
        produce(sends, next);
        received = std::move(next);
      }
      last = std::move(compute);
    }
    return last;
  }

  // A tensor crossing pipeline stages, created by whichever side is emitted first.
  PerPeer<TensorId> boundary_tensor(const BoundaryKey& key, int receiving_stage) {
    if (boundaries_.empty()) boundaries_.resize(static_cast<std::size_t>(group_count()) * s_.microbatches() * 2);
    PerPeer<TensorId>& tensors = boundaries_[(static_cast<std::size_t>(key.group) * s_.microbatches() +
                                              static_cast<std::size_t>(key.microbatch)) *
                                                 2 +
                                             (key.backward ? 1 : 0)];
    if (tensors.empty()) tensors = add_tensors(receiving_stage, boundary_bytes(), TensorKind::activation);
    return tensors;
  }

  // Sends `value` from this stage to the stage of virtual stage `to_group` over each peer's link.
  void send(int stage, int to_group, const BoundaryKey& key, const PerPeer<TensorId>& value, std::string_view what) {
    const int to_stage = stage_of_group(to_group);
    const auto& from_peers = stages_[static_cast<std::size_t>(stage)];
    const auto& to_peers = stages_[static_cast<std::size_t>(to_stage)];
    const PerPeer<TensorId> received = boundary_tensor(key, to_stage);
    WorkId& work_id = transfer_work_[{stage, to_stage}];
    if (!work_id.valid()) {
      OpWork transfer;
      transfer.op_class = OpClass::send;
      transfer.network_bytes = boundary_bytes();
      transfer.shape = {transfer.network_bytes};
      transfer.comm_group = point_to_point_group(CommGroupKind::pp, from_peers.front().rank, to_peers.front().rank);
      work_id = b_->intern_work(transfer);
    }
    const NameId send_name =
        b_->intern_name(name("send {} mb{} stage {} -> {}", what, key.microbatch, stage, to_stage));
    for (std::size_t i = 0; i < from_peers.size(); ++i) {
      const OpId op = b_->add_op(send_name, work_id, link(from_peers[i], to_peers[i]));
      if (!value.empty()) b_->add_input(op, value[i]);
      b_->add_output(op, received[i]);
    }
  }

  // ---- backward and weight passes -------------------------------------------------------------

  void emit_backward(int stage, Chunk& chunk, const PipelineAction& action, ForwardRecord& record,
                     std::vector<PendingWeightGrad>& pending) {
    const int mb = action.microbatch;
    const PerPeer<TensorId> dy =
        chunk.group + 1 < group_count() ? boundary_tensor({chunk.group, mb, true}, stage) : record.output;
    PerPeer<TensorId> dx;
    if (composites_) {
      dx = emit_backward_passes(stage, chunk, mb, dy, record, pending);
    } else {
      std::vector<PerPeer<TensorId>> recomputed(chunk.steps.size());
      // Its own pass: it reads only its checkpoint, so unlike the rest of the backward it need
      // not wait for the incoming gradient.
      if (recomputes_before_gradient(chunk))
        recompute_layer(stage, chunk, chunk.steps.size() - 1, mb, record, recomputed);
      dx = backward_body(stage, chunk, dy, record, std::move(recomputed), mb, pending);
    }
    if (chunk.group > 0) send(stage, chunk.group - 1, {chunk.group - 1, mb, true}, dx, "gradient");
  }

  // The backward of a microbatch as composites: the recompute pass of the chunk's last layer
  // when it has one, then the backward pass, which leaves what the weight pass needs in a
  // bundle. Returns the input gradient; `pending` gets the weight gradients left to the weight
  // pass, as handles of bundle members.
  PerPeer<TensorId> emit_backward_passes(int stage, const Chunk& chunk, int mb, const PerPeer<TensorId>& dy,
                                         ForwardRecord& record, std::vector<PendingWeightGrad>& pending) {
    PassValues escapes;
    if (recomputes_before_gradient(chunk)) {
      emit_pass(stage, chunk, "recompute", mb, {}, escapes, record.bundles, [&](std::vector<PassBundle>& leaving) {
        std::vector<PerPeer<TensorId>> inner(chunk.steps.size());
        recompute_layer(stage, chunk, chunk.steps.size() - 1, -1, forward_handles(stage, chunk), inner);
        for (std::size_t k = 0; k < inner.size(); ++k) {
          leave(leaving, route_of_saved(chunk, k, Route::recompute_to_backward), member_key(Kept::recomputed, k),
                inner[k]);
        }
        return PassValues{};
      });
    }
    emit_pass(stage, chunk, "bwd", mb, PassValues{dy}, escapes, record.bundles, [&](std::vector<PassBundle>& leaving) {
      std::vector<PendingWeightGrad> inner_pending;
      PerPeer<TensorId> dx =
          backward_body(stage, chunk, dy, forward_handles(stage, chunk),
                        member_handles(stage, chunk, "recompute", Kept::recomputed), -1, inner_pending);
      // The first chunk's input gradient goes nowhere (and may be a weight gradient's input).
      PassValues values{chunk.group > 0 ? dx : PerPeer<TensorId>{}};
      // What the weight pass reads: output gradients made here, and inputs saved by the forward
      // or the recompute pass (handles already) or recomputed here.
      std::vector<PendingWeightGrad>& handles = weight_pass_inputs_[chunk.shape];
      for (const PendingWeightGrad& weight : inner_pending) {
        PendingWeightGrad& handle = handles.emplace_back(PendingWeightGrad{weight.step, {}, weight.input});
        // The incoming gradient itself (left empty here) is the weight pass's own input.
        if (PassRecorder::is_tagged(weight.output_grad.front())) {
          const std::uint32_t gradient =
              leave(leaving, Route::backward_to_weight, member_key(Kept::output_grad, weight.step), weight.output_grad);
          handle.output_grad = handles_of(gradient, weight.output_grad.size());
        }
        if (!weight.input.empty() && PassRecorder::is_tagged(weight.input.front())) {
          const std::uint32_t input =
              leave(leaving, Route::backward_to_weight, member_key(Kept::recomputed, weight.step), weight.input);
          handle.input = handles_of(input, weight.input.size());
        }
      }
      return values;
    });
    if (auto it = weight_pass_inputs_.find(chunk.shape); it != weight_pass_inputs_.end()) pending = it->second;
    for (PendingWeightGrad& weight : pending) {
      if (weight.output_grad.empty()) weight.output_grad = record.output_grad = dy;
    }
    return escapes[0];
  }

  // What a chunk's forward pass saved and checkpointed, as handles of its bundles' members.
  ForwardRecord forward_handles(int stage, const Chunk& chunk) {
    ForwardRecord handles;
    handles.saved = member_handles(stage, chunk, "fwd", Kept::saved);
    handles.checkpoint = member_handles(stage, chunk, "fwd", Kept::checkpoint);
    return handles;
  }

  PerPeer<TensorId> handles_of(std::uint32_t key, std::size_t peers) {
    PerPeer<TensorId> handles;
    for (std::size_t peer = 0; peer < peers; ++peer)
      handles.push_back(member_handles_.handle(key, static_cast<std::uint32_t>(peer)));
    return handles;
  }

  // Whether full recompute of the chunk's last step's layer starts its backward, before any op
  // reads the incoming gradient.
  bool recomputes_before_gradient(const Chunk& chunk) const {
    return s_.parallel.recompute == RecomputePolicy::full && is_layer(chunk, chunk.steps.size() - 1);
  }

  // The chunk's backward pass of a microbatch from output gradient `dy`, with what its forward
  // saved and `recomputed` (what a recompute pass before it rematerialized); returns the input
  // gradient. Weight gradients are computed, or left in `pending`.
  PerPeer<TensorId> backward_body(int stage, const Chunk& chunk, PerPeer<TensorId> dy, const ForwardRecord& record,
                                  std::vector<PerPeer<TensorId>> recomputed, int mb,
                                  std::vector<PendingWeightGrad>& pending) {
    const bool selective = s_.parallel.recompute == RecomputePolicy::selective;
    for (std::size_t k = chunk.steps.size(); k-- > 0;) {
      const Step& step = chunk.steps[k];
      const bool layer_end = k + 1 < chunk.steps.size() && chunk.block[k + 1] != chunk.block[k];
      if (s_.parallel.recompute == RecomputePolicy::full && is_layer(chunk, k) && layer_end) {
        recompute_layer(stage, chunk, k, mb, record, recomputed);
      }
      PerPeer<TensorId> saved = recomputed[k].empty() ? record.saved[k] : recomputed[k];
      PerPeer<TensorId> rematerialized;
      if (selective && step.attention_core && step.recomputable_bytes > 0) {
        const PerPeer<OpId> ops =
            add_ops(stage, op_name(step, "recompute", mb), step_work(*step.forward, std::nullopt, stage), std::nullopt);
        consume(ops, saved);
        rematerialized = add_tensors(stage, step.recomputable_bytes, TensorKind::activation);
        produce(ops, rematerialized);
      }
      const bool first_of_model = chunk.group == 0 && k == 0;
      PerPeer<TensorId> dx = dy;
      if (step.backward && !first_of_model) {
        PerPeer<OpId> ops;
        dx = add_tensors(stage, k == 0 ? chunk.input_bytes : chunk.steps[k - 1].output_bytes, TensorKind::activation);
        if (step.context_parallel_chunks > 1) {
          ops = emit_ring_attention(stage, step, *step.backward, "bwd", mb, dy, 2);
        } else {
          ops = add_ops(stage, op_name(step, "bwd", mb), step_work(*step.backward, step.comm, stage), step.comm,
                        backward_lane(step));
          consume(ops, dy);
        }
        if (!step.weight_grad) consume(ops, saved);
        consume(ops, rematerialized);
        produce(ops, dx);
        record_grad_op(chunk, k, ops);
      }
      if (step.weight_grad) {
        PendingWeightGrad weight{k, dy, saved};
        if (split_weight_grads_) {
          pending.push_back(std::move(weight));
        } else {
          emit_weight_grad(stage, chunk, weight, mb);
        }
      }
      dy = std::move(dx);
    }
    return dy;
  }

  // Full recompute: before the backward of the layer ending at step `last`, run its forward again
  // from the checkpointed input, saving what its backward needs.
  void recompute_layer(int stage, const Chunk& chunk, std::size_t last, int mb, const ForwardRecord& record,
                       std::vector<PerPeer<TensorId>>& recomputed) {
    std::size_t first = last;
    while (first > 0 && chunk.block[first - 1] == chunk.block[last]) --first;
    PerPeer<TensorId> x;
    for (std::size_t i = first; i <= last; ++i) {
      if (!record.checkpoint[i].empty()) x = record.checkpoint[i];
      const Step& step = chunk.steps[i];
      if (!step.forward) continue;
      const PerPeer<OpId> ops =
          add_ops(stage, op_name(step, "recompute", mb), step_work(*step.forward, step.comm, stage), step.comm);
      consume(ops, x);
      if (step.saved_bytes > 0) {
        recomputed[i] = add_tensors(stage, step.saved_bytes, TensorKind::activation);
        produce(ops, recomputed[i]);
      }
      // The layer's own output is not needed again: the backward starts from the incoming gradient.
      x = {};
      if (i < last) {
        x = add_tensors(stage, step.output_bytes, TensorKind::activation);
        produce(ops, x);
      }
    }
  }

  // Backward TP collectives run asynchronously on the TP stream; other ops stay on compute.
  static Lane backward_lane(const Step& step) {
    const bool tensor_parallel = step.comm == CommGroupKind::tp && step.backward &&
                                 category_of(step.backward->op_class) == OpCategory::communication;
    return tensor_parallel ? Lane::tensor_parallel : Lane::compute;
  }

  // The weight gradient of one step; in a weight pass, its ops off the compute stream wait for
  // the pass's barrier `join`.
  void emit_weight_grad(int stage, const Chunk& chunk, const PendingWeightGrad& weight, int mb,
                        const PerPeer<OpId>& join = {}) {
    const Step& step = chunk.steps[weight.step];
    PerPeer<TensorId> input = weight.input;
    if (step.regather) {
      // Issued with the backward of the step: it waits for the step's output gradient too.
      const PerPeer<OpId> gather =
          add_ops(stage, op_name(step, "regather", mb), step_work(*step.regather, step.comm, stage), step.comm,
                  Lane::tensor_parallel);
      consume(gather, input);
      consume(gather, weight.output_grad);
      after(join, gather);
      input = add_tensors(stage, step.regather->network_bytes, TensorKind::activation);
      produce(gather, input);
    }
    const PerPeer<OpId> ops =
        add_ops(stage, op_name(step, "wgrad", mb), step_work(*step.weight_grad, std::nullopt, stage), std::nullopt);
    consume(ops, weight.output_grad);
    consume(ops, input);
    record_grad_op(chunk, weight.step, ops);
  }

  void emit_weight_pass(int stage, const Chunk& chunk, const PipelineAction& action, ForwardRecord& record,
                        std::vector<PendingWeightGrad>& pending) {
    if (pending.empty()) return;
    if (composites_) {
      // It reads bundles (what the forward, recompute and backward passes left for it) and maybe
      // the backward's incoming gradient.
      PassValues escapes;
      emit_pass(stage, chunk, "weight", action.microbatch, {record.output_grad}, escapes, record.bundles,
                [&](std::vector<PassBundle>&) {
                  weight_pass_body(stage, chunk, pending, -1);
                  return PassValues{};
                });
    } else {
      weight_pass_body(stage, chunk, pending, action.microbatch);
    }
    pending.clear();
  }

  // The weight pass starts when every gradient it needs is there (the backward's asynchronous TP
  // collectives included), as a framework's W step does after waiting on them: a barrier on the
  // compute stream reads them all, and the pass's ops on other lanes wait for it.
  void weight_pass_body(int stage, const Chunk& chunk, const std::vector<PendingWeightGrad>& pending, int mb) {
    OpWork join_work;
    join_work.op_class = OpClass::barrier;
    const PerPeer<OpId> join =
        add_ops(stage, name("weight pass inputs{}", mb_suffix(mb)), b_->intern_work(join_work), std::nullopt);
    for (const PendingWeightGrad& weight : pending) {
      consume(join, weight.output_grad);
      consume(join, weight.input);
    }
    for (const PendingWeightGrad& weight : pending) emit_weight_grad(stage, chunk, weight, mb, join);
  }

  // The op that last produced gradients of a step's parameters (its weight-gradient op, or for
  // fused kernels such as norms its backward op): the data-parallel reduction waits for it.
  // While a pass is recorded, they become the template's signals.
  void record_grad_op(const Chunk& chunk, std::size_t step, const PerPeer<OpId>& ops) {
    if (chunk.steps[step].parameters == 0) return;
    if (recorder_ != nullptr) {
      for (std::size_t i = 0; i < ops.size(); ++i) recorder_->add_signal(step, i, ops[i]);
      return;
    }
    PerPeer<Gate> gates;
    for (OpId op : ops) gates.push_back({op, -1});
    record_grad_gates(chunk, step, gates);
  }

  void record_grad_gates(const Chunk& chunk, std::size_t step, const PerPeer<Gate>& gates) {
    auto& last = last_grad_op_[chunk_index(chunk)];
    if (last.size() < chunk.steps.size()) last.resize(chunk.steps.size());
    last[step] = gates;
  }

  std::size_t chunk_index(const Chunk& chunk) const { return static_cast<std::size_t>(chunk.group / s_.parallel.pp); }

  // ---- data parallelism and the optimizer -----------------------------------------------------

  std::int64_t bucket_parameters() const {
    if (s_.options.dp_bucket_parameters > 0) return s_.options.dp_bucket_parameters;
    return std::max<std::int64_t>(40'000'000, 1'000'000LL * s_.parallel.dp);
  }

  // Buckets of parameters in the order the backward pass finishes them (last chunk's last step
  // first), each closed once it holds at least the bucket size.
  struct Bucket {
    std::int64_t parameters = 0;
    std::vector<std::pair<std::size_t, std::size_t>> steps;  // (chunk, step)
  };

  std::vector<Bucket> buckets(int stage) const {
    std::vector<Bucket> out(1);
    const auto& chunks = chunks_[static_cast<std::size_t>(stage)];
    for (std::size_t c = chunks.size(); c-- > 0;) {
      for (std::size_t i = chunks[c].steps.size(); i-- > 0;) {
        if (chunks[c].steps[i].parameters == 0) continue;
        if (out.back().parameters >= bucket_parameters()) out.emplace_back();
        out.back().parameters += chunks[c].steps[i].parameters;
        out.back().steps.emplace_back(c, i);
      }
    }
    if (out.back().parameters == 0) out.pop_back();
    return out;
  }

  void emit_gradient_reduction(int stage) {
    const bool sharded = s_.parallel.zero == 1;
    if (dims_.dp * dims_.cp == 1) return;
    const std::vector<Bucket> stage_buckets = buckets(stage);
    for (std::size_t k = 0; k < stage_buckets.size(); ++k) {
      const Bucket& bucket = stage_buckets[k];
      const OpWork reduction =
          communication_work(sharded ? OpClass::reducescatter : OpClass::allreduce, 2 * bucket.parameters);
      const PerPeer<OpId> ops =
          add_ops(stage, name("grad {} bucket {}", sharded ? "reduce-scatter" : "all-reduce", k),
                  placed_work(reduction, CommGroupKind::dp, stage), CommGroupKind::dp, Lane::data_parallel);
      for (const auto& [chunk, step] : bucket.steps) {
        if (!s_.options.overlap_grad_reduce) break;
        const auto& last = last_grad_op_[chunk];
        if (step < last.size()) after(last[step], ops);
      }
      if (!s_.options.overlap_grad_reduce) after(stage_last_compute_[stage], ops);
      gradient_syncs_[stage].push_back(ops);
    }
  }

  // ZeRO-1 all-gathers the updated parameters, bucket by bucket. Overlapped (Megatron's
  // --overlap-param-gather), the gather of the previous iteration's update runs at the start
  // of this one and each chunk's first forward waits for its buckets.
  void emit_param_gather(int stage) {
    const std::vector<Bucket> stage_buckets = buckets(stage);
    param_gathers_.assign(stage_buckets.size(), {});
    param_gather_chunks_.assign(stage_buckets.size(), {});
    // Buckets hold parameters in backward order; the forward needs them the other way round.
    for (std::size_t k = stage_buckets.size(); k-- > 0;) {
      const OpWork gather = communication_work(OpClass::allgather, 2 * stage_buckets[k].parameters);
      param_gathers_[k] =
          add_ops(stage, name("param all-gather bucket {}", k), placed_work(gather, CommGroupKind::dp, stage),
                  CommGroupKind::dp, Lane::data_parallel);
      for (const auto& [chunk, step] : stage_buckets[k].steps) param_gather_chunks_[k].push_back(chunk);
      if (!s_.options.overlap_param_gather) after(optimizer_ops_[stage], param_gathers_[k]);
    }
  }

  void after_param_gather(int chunk, const PerPeer<OpId>& first_forward) {
    if (s_.parallel.zero != 1 || !s_.options.overlap_param_gather) return;
    for (std::size_t k = 0; k < param_gathers_.size(); ++k) {
      const auto& chunks = param_gather_chunks_[k];
      if (std::find(chunks.begin(), chunks.end(), static_cast<std::size_t>(chunk)) != chunks.end()) {
        after(param_gathers_[k], first_forward);
      }
    }
  }

  // Tied embeddings split over pipeline stages: the first and last stages all-reduce the
  // gradient of the shared table before the optimizer steps.
  void emit_tied_embedding_sync() {
    if (!s_.model.tied_embeddings || s_.parallel.pp == 1) return;
    const std::int64_t table = (s_.model.vocab + s_.parallel.tp - 1) / s_.parallel.tp * s_.model.hidden;
    const OpWork reduction = communication_work(OpClass::allreduce, 2 * table);
    const int last = s_.parallel.pp - 1;
    // One communicator: the first stage's rank and the last stage's rank with the same coordinates.
    const WorkId work_id = placed_work(reduction, CommGroupKind::embedding, 0);
    const PerPeer<OpId> first_ops =
        add_ops(0, "embedding grad all-reduce", work_id, CommGroupKind::embedding, Lane::data_parallel);
    const PerPeer<OpId> last_ops =
        add_ops(last, "embedding grad all-reduce", work_id, CommGroupKind::embedding, Lane::data_parallel);
    for (std::size_t i = 0; i < first_ops.size(); ++i) {
      b_->add_collective("embedding grad all-reduce", std::vector<OpId>{first_ops[i], last_ops[i]});
    }
    gradient_syncs_[0].push_back(first_ops);
    gradient_syncs_[last].push_back(last_ops);
    after(stage_last_compute_[0], first_ops);
    after(stage_last_compute_[last], last_ops);
  }

  void emit_optimizer(int stage) {
    const std::int64_t parameters = stage_parameters(stage) / optimizer_shards();
    const OpWork step = memory_bound_work(OpClass::optimizer, kOptimizerTrafficBytes * parameters,
                                          10.0 * static_cast<double>(parameters), Dtype::fp32, {parameters});
    const PerPeer<OpId> ops = add_ops(stage, "optimizer step", b_->intern_work(step), std::nullopt);
    for (const auto& sync : gradient_syncs_[stage]) after(sync, ops);
    const auto& tensors = static_tensors_[stage];
    consume(ops, tensors.gradients);
    consume(ops, tensors.optimizer_states);
    optimizer_ops_[stage] = ops;
    if (s_.parallel.zero == 1 && !s_.options.overlap_param_gather) emit_param_gather(stage);
  }

  double model_flops_per_iteration() const {
    double per_rank = 0.0;
    for (const auto& stage_chunks : chunks_) {
      for (const Chunk& chunk : stage_chunks) {
        for (const Step& step : chunk.steps) per_rank += step.model_flops;
      }
    }
    // Forward and backward (twice the forward) of every microbatch on every TP, CP and DP shard.
    return 3.0 * per_rank * static_cast<double>(s_.microbatches()) * dims_.tp * dims_.cp * dims_.dp;
  }

  struct StageTensors {
    PerPeer<TensorId> parameters;
    PerPeer<TensorId> gradients;
    PerPeer<TensorId> optimizer_states;
  };

  const TrainingScenario& s_;
  bool unfold_;
  bool name_ops_;
  bool composites_;
  ParallelDims dims_;
  ShardContext context_;
  Model model_;
  std::unique_ptr<ClusterCostModel> cost_;
  GraphBuilder outer_;
  GraphBuilder* b_ = &outer_;  // the template's while a pass is recorded
  bool split_weight_grads_ = false;
  DeviceSpecId gpu_spec_;
  DeviceSpecId link_spec_;
  std::vector<SimulatedRank> ranks_;
  std::vector<std::vector<Peer>> stages_;
  std::vector<std::vector<Chunk>> chunks_;
  fmt::memory_buffer name_buffer_;
  std::string op_name_;
  struct WorkKeyHash {
    std::size_t operator()(const std::pair<const OpWork*, int>& key) const noexcept {
      return std::hash<const void*>{}(key.first) ^ (static_cast<std::size_t>(key.second) << 1);
    }
  };
  std::unordered_map<std::pair<const OpWork*, int>, WorkId, WorkKeyHash> work_ids_;
  std::vector<std::uint32_t> stage_groups_;  // by stage and communicator kind; 0 until placed
  std::map<std::pair<int, CommGroupKind>, std::vector<std::vector<std::size_t>>> partitions_;
  std::map<std::pair<std::int64_t, std::int64_t>, StreamId> links_;
  std::vector<PerPeer<TensorId>> boundaries_;  // by (virtual stage, microbatch, direction): see boundary_tensor
  std::map<std::pair<int, int>, WorkId> transfer_work_;  // by (stage, stage it sends to)
  std::map<int, StageTensors> static_tensors_;
  std::map<int, std::vector<PerPeer<OpId>>> gradient_syncs_;
  std::map<int, PerPeer<OpId>> optimizer_ops_;
  std::map<int, PerPeer<OpId>> stage_last_compute_;
  PerPeer<OpId> last_compute_ops_;  // the latest op on the compute streams of the stage being emitted
  // Passes as templates (composites_) by (stage, virtual stage, phase; phases are string literals),
  // and the recording under way.
  std::map<std::tuple<int, int, std::string_view>, PassTemplate> pass_templates_;
  BundleMemberHandles member_handles_;
  // The weight gradients a backward pass leaves, as handles.
  std::map<std::size_t, std::vector<PendingWeightGrad>> weight_pass_inputs_;  // by chunk shape
  std::vector<const Chunk*> shapes_;                                          // a chunk of each shape
  // The template recorded first for each (chunk shape, phase), and the stage it was recorded on.
  std::map<std::pair<std::size_t, std::string_view>, std::pair<int, const PassTemplate*>> templates_by_shape_;
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

}  // namespace

TrainingWorkload build_training_workload(const TrainingScenario& scenario, const WorkloadOptions& options) {
  return TrainingGraphBuilder(scenario, options).build();
}

}  // namespace weft
