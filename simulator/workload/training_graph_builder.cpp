#include "simulator/workload/training_graph_builder.hpp"

#include <algorithm>
#include <charconv>
#include <numeric>

#include "simulator/core/checked_math.hpp"
#include "simulator/workload/module_meshes.hpp"

namespace weft::training_graph {
namespace {

// Whether two steps do the same work (their names aside).
bool same_work(const Step& a, const Step& b) {
  return a.forward == b.forward && a.backward == b.backward && a.weight_grad == b.weight_grad &&
         a.regather == b.regather && a.comm == b.comm && a.output_bytes == b.output_bytes &&
         a.saved_bytes == b.saved_bytes && a.forward_workspace_bytes == b.forward_workspace_bytes &&
         a.backward_workspace_bytes == b.backward_workspace_bytes &&
         a.weight_grad_saved_bytes == b.weight_grad_saved_bytes && a.recomputable_bytes == b.recomputable_bytes &&
         a.model_flops == b.model_flops && a.training_flops_factor == b.training_flops_factor &&
         a.parameters == b.parameters && a.trainable == b.trainable && a.attention_core == b.attention_core &&
         a.context_parallel_chunks == b.context_parallel_chunks &&
         a.context_parallel_bytes == b.context_parallel_bytes && a.op_checkpoint_bytes == b.op_checkpoint_bytes &&
         a.op_recompute_share == b.op_recompute_share && a.op_recompute == b.op_recompute;
}

}  // namespace

TrainingGraphBuilder::TrainingGraphBuilder(const TrainingScenario& scenario, const WorkloadOptions& options)
    : s_(scenario),
      recomputed_layers_(scenario.recomputed_layers()),
      microbatch_shapes_(scenario.microbatch_shapes()),
      unfold_(options.unfold),
      name_ops_(options.name_ops),
      composites_(options.composites),
      model_(scenario.model, scenario.parallel.cp_algorithm),
      graph_(scenario.stage_graph()),
      cost_(std::make_unique<ClusterCostModel>(scenario.cluster)) {
  const ParallelPlan& plan = scenario.parallel;
  dims_ = plan.dims();
  context_ = scenario.shard_context();
  cost_->set_ideal_network(scenario.options.ideal_network);
  cost_->set_host_issue(scenario.options.host_issue);
  cost_->set_kernel_gap(scenario.options.kernel_gap);
  cost_->force_algorithm(scenario.options.collective_algorithm);
  split_weight_grads_ = splits_weight_gradients(plan.schedule);
  // Per-sample data gives each DP replica its own batches; stragglers make some replicas slower
  // than others, and those that differ are simulated apart (unfolded, every rank is its own).
  if (microbatch_shapes_) {
    // Every replica of each position's mesh: an image encoder on a mesh of another DP takes shares
    // of the slots (module_meshes.hpp).
    position_shapes_.assign(static_cast<std::size_t>(plan.pp), nullptr);
    int most = plan.dp;
    for (int position = 0; position < plan.pp; ++position) {
      const int dp = dims_.dp_at(position);
      most = std::max(most, dp);
      if (dp == plan.dp) continue;
      auto [shares, made] = module_replica_shapes_.try_emplace(dp);
      if (made) shares->second = module_replica_shapes(*microbatch_shapes_, dp, scenario.data->pad_to);
      position_shapes_[static_cast<std::size_t>(position)] = &shares->second;
    }
    replica_dp_.resize(static_cast<std::size_t>(most));
    std::iota(replica_dp_.begin(), replica_dp_.end(), 0);
  } else {
    replica_dp_ = unfold_ ? std::vector<int>{0} : distinct_replicas(scenario.cluster, dims_);
  }
  replicas_ = static_cast<int>(replica_dp_.size());
  if (plan.per_module_meshes() && unfold_) {
    throw InputError("--unfold: modules on meshes of their own (parallel.modules) are simulated folded");
  }
  check_simulated_meshes(scenario);
  // Joining simulated replicas' collectives assumes one data-parallel group per stage (the
  // scenario's validation refuses per-sample data and stragglers with hybrid sharding).
  if (plan.hybrid_sharding() && unfold_) {
    throw InputError(
        "--unfold: hybrid sharding (parallel.dp_shard) is simulated folded, with one replica of each stage");
  }
  if (microbatch_shapes_ && unfold_) {
    throw InputError(
        "--unfold: with per-sample data every DP replica is simulated already; TP and CP ranks stay "
        "folded (simulate without --unfold)");
  }
}

TrainingWorkload TrainingGraphBuilder::build() {
  number_stages();
  create_ranks();
  create_chunks();
  for (int stage = 0; stage < stage_count(); ++stage) create_static_tensors(stage);
  for (int replica = 0; replica < replicas_; ++replica) {
    boundaries_.clear();
    for (int position = 0; position < s_.parallel.pp; ++position) {
      if (replica < replicas_at(position)) emit_stage(stage_of(replica, position));
    }
    if (replica < replicas_at(s_.parallel.pp - 1)) emit_tied_embedding_sync(replica);
  }
  for (int stage = 0; stage < stage_count(); ++stage) emit_optimizer(stage);
  group_replica_collectives();
  TrainingWorkload workload;
  workload.graph = std::move(outer_).build();
  workload.cost_model = std::move(cost_);
  workload.ranks = std::move(ranks_);
  workload.passes = std::move(passes_);
  workload.folded = !unfold_;
  workload.per_replica = replicas_ > 1;
  workload.microbatches = s_.microbatches();
  workload.model_flops_per_iteration = model_flops_per_iteration();
  workload.shapes = std::move(microbatch_shapes_);
  workload.pass_templates = pass_templates_.size();
  workload.layer_templates = layer_templates_.size();
  return workload;
}

void TrainingGraphBuilder::number_stages() {
  const int pp = s_.parallel.pp;
  stage_index_.assign(static_cast<std::size_t>(pp) * static_cast<std::size_t>(replicas_), -1);
  for (int replica = 0; replica < replicas_; ++replica) {
    for (int position = 0; position < pp; ++position) {
      if (replica >= replicas_at(position)) continue;
      stage_index_[static_cast<std::size_t>(position) * static_cast<std::size_t>(replicas_) +
                   static_cast<std::size_t>(replica)] = stage_count();
      stage_position_.push_back(position);
      stage_replica_.push_back(replica);
    }
  }
}

void TrainingGraphBuilder::create_ranks() {
  DeviceSpec link;
  link.name = "p2p-link";
  link.kind = DeviceKind::link;
  link_spec_ = b_->add_device_spec(link);
  stages_.resize(static_cast<std::size_t>(stage_count()));
  stage_groups_.assign(static_cast<std::size_t>(stage_count()) * kCommGroupKindCount, 0);
  shard_replica_groups_.assign(static_cast<std::size_t>(stage_count()), 0);
  replica_collectives_of_stage_.assign(static_cast<std::size_t>(stage_count()), 0);
  for (int stage = 0; stage < stage_count(); ++stage) {
    const auto [first_dp, dp_end] = dp_ranks(replica_of(stage));
    for (int dp = first_dp; dp < dp_end; ++dp) {
      for (int cp = 0; cp < (unfold_ ? dims_.cp : 1); ++cp) {
        for (int tp = 0; tp < (unfold_ ? dims_.tp : 1); ++tp) add_peer(stage, {tp, cp, dp, position_of(stage)});
      }
    }
  }
  std::map<std::vector<double>, int> paces;
  for (const std::vector<Peer>& peers : stages_) {
    std::vector<double> speeds;
    for (const Peer& peer : peers) {
      speeds.push_back(peer.pace.speed);
      speeds.push_back(static_cast<double>(peer.pace.node_group));
      // A pass template's TP and CP collectives are costed by its recording stage's groups: stages
      // whose groups run over slower links must not share it.
      const auto [nic, nvlink] = slowest_links(s_.cluster, dims_, peer.coordinates.dp, peer.coordinates.pp);
      speeds.push_back(nic);
      speeds.push_back(nvlink);
    }
    stage_pace_.push_back(paces.emplace(std::move(speeds), static_cast<int>(paces.size())).first->second);
  }
}

std::pair<std::vector<DeviceSpec>, std::vector<DeviceId>> TrainingGraphBuilder::recording_devices(int stage) const {
  std::pair<std::vector<DeviceSpec>, std::vector<DeviceId>> devices;
  for (const Peer& peer : stages_[static_cast<std::size_t>(stage)]) {
    devices.first.push_back(at_speed(s_.cluster.gpu_of_group(peer.pace.node_group), peer.pace.speed));
    devices.second.push_back(peer.device);
  }
  return devices;
}

std::pair<int, int> TrainingGraphBuilder::dp_ranks(int replica) const {
  if (replicas_ > 1) {
    const int dp = replica_dp_[static_cast<std::size_t>(replica)];
    return {dp, dp + 1};
  }
  return {0, unfold_ ? dims_.dp : 1};
}

void TrainingGraphBuilder::add_peer(int stage, const RankCoordinates& c) {
  Peer peer;
  peer.coordinates = c;
  peer.rank = dims_.rank_of(c);
  const PaceSetter pace = pace_setter(s_.cluster, dims_, c, {!unfold_, !unfold_, !unfold_ && replicas_ == 1});
  peer.pace = pace;
  auto [spec, made] = gpu_specs_.try_emplace({pace.node_group, pace.speed});
  if (made) spec->second = b_->add_device_spec(at_speed(s_.cluster.gpu_of_group(pace.node_group), pace.speed));
  peer.device = b_->add_device(dims_.label_of(c), spec->second);
  // The framework's host thread issues the compute kernels; communication streams are left to
  // their own pace (docs/host-issue.md).
  peer.compute = b_->add_stream(peer.device, "compute", StreamPolicy::in_order, true);
  peer.tensor_parallel = b_->add_stream(peer.device, "tp comm");
  peer.data_parallel = b_->add_stream(peer.device, "dp comm");
  peer.context_parallel = b_->add_stream(peer.device, "cp comm");
  if (s_.parallel.hybrid_sharding()) peer.shard_replicas = b_->add_stream(peer.device, "dp replicas comm");
  peer.simulated_index = ranks_.size();
  peer.index = stages_[static_cast<std::size_t>(stage)].size();
  SimulatedRank rank;
  rank.rank = peer.rank;
  rank.coordinates = c;
  rank.device = peer.device;
  rank.speed = pace.speed;
  rank.pace_setter = pace.gpu;
  ranks_.push_back(rank);
  stages_[static_cast<std::size_t>(stage)].push_back(peer);
}

std::uint32_t TrainingGraphBuilder::group_id(CommGroupKind kind, const RankCoordinates& c) {
  std::vector<std::int64_t> ranks;
  auto add = [&](RankCoordinates member) { ranks.push_back(dims_.rank_of(member)); };
  switch (kind) {
    case CommGroupKind::tp:
      for (int tp = 0; tp < dims_.tp_at(c.pp); ++tp) add({tp, c.cp, c.dp, c.pp});
      break;
    case CommGroupKind::cp:
      for (int cp = 0; cp < dims_.cp; ++cp) add({c.tp, cp, c.dp, c.pp});
      break;
    case CommGroupKind::dp: {  // gradients are reduced over data and context parallel ranks
      const int width = s_.parallel.shard_dp_at(c.pp);
      const int first = c.dp / width * width;
      for (int dp = first; dp < first + width; ++dp) {
        for (int cp = 0; cp < dims_.cp; ++cp) add({c.tp, cp, dp, c.pp});
      }
      break;
    }
    case CommGroupKind::pp:
    case CommGroupKind::embedding:
      add(c);
      add({c.tp, c.cp, c.dp, kind == CommGroupKind::embedding ? dims_.pp - 1 : c.pp + 1});
      break;
  }
  return cost_->add_group(make_comm_group(kind, ranks, s_.cluster));
}

std::uint32_t TrainingGraphBuilder::point_to_point_group(CommGroupKind kind, std::int64_t from, std::int64_t to) {
  const std::array<std::int64_t, 2> ranks{from, to};
  return cost_->add_group(make_comm_group(kind, ranks, s_.cluster));
}

const std::vector<std::vector<std::size_t>>& TrainingGraphBuilder::partition(int stage, CommGroupKind kind) {
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

WorkId TrainingGraphBuilder::placed_work(const OpWork& base, std::optional<CommGroupKind> kind, int stage) {
  if (!kind || category_of(base.op_class) != OpCategory::communication) return b_->intern_work(base);
  OpWork copy = base;
  copy.comm_group = stage_group(*kind, stage);
  return b_->intern_work(copy);
}

WorkId TrainingGraphBuilder::step_work(const OpWork& step_work, std::optional<CommGroupKind> kind, int stage) {
  if (recorder_ != nullptr) return placed_work(step_work, kind, stage);  // another graph's ids
  const auto key = std::make_pair(&step_work, kind ? stage : -1);
  if (auto it = work_ids_.find(key); it != work_ids_.end()) return it->second;
  const WorkId id = placed_work(step_work, kind, stage);
  work_ids_.emplace(key, id);
  return id;
}

std::uint32_t TrainingGraphBuilder::stage_group(CommGroupKind kind, int stage) {
  std::uint32_t& id =
      stage_groups_[static_cast<std::size_t>(stage) * kCommGroupKindCount + static_cast<std::size_t>(kind)];
  if (id == 0) id = group_id(kind, stages_[static_cast<std::size_t>(stage)].front().coordinates);
  return id;
}

StreamId TrainingGraphBuilder::lane_stream(const Peer& peer, Lane lane) {
  if (recorder_ == nullptr) return outer_lane_stream(peer, lane);
  const Peer& outer = stages_[static_cast<std::size_t>(recording_stage_)][peer.index];
  return recorder_->stream(outer_lane_stream(outer, lane), peer.index, kLaneNames[static_cast<std::size_t>(lane)]);
}

StreamId TrainingGraphBuilder::outer_lane_stream(const Peer& peer, Lane lane) {
  switch (lane) {
    case Lane::compute:
      return peer.compute;
    case Lane::tensor_parallel:
      return peer.tensor_parallel;
    case Lane::data_parallel:
      return peer.data_parallel;
    case Lane::context_parallel:
      return peer.context_parallel;
    case Lane::shard_replicas:
      return peer.shard_replicas;
  }
  return peer.compute;
}

const std::vector<Peer>& TrainingGraphBuilder::peers(int stage) const {
  return recorder_ != nullptr ? recording_peers_ : stages_[static_cast<std::size_t>(stage)];
}

PerPeer<OpId> TrainingGraphBuilder::add_ops(int stage, std::string_view name, WorkId work_id,
                                            std::optional<CommGroupKind> kind, Lane lane) {
  const NameId name_id = b_->intern_name(name);
  const OpClass op_class = b_->work(work_id).op_class;
  if (collective_sms_share_ > 0.0 && category_of(op_class) == OpCategory::compute)
    work_id = beside_collectives(stage, work_id);
  const auto& stage_peers = peers(stage);
  PerPeer<OpId> ops;
  ops.reserve(stage_peers.size());
  // Unfolded, a stage's peers belong to several groups of `kind`: with stragglers their links may
  // differ, so each peer's op is costed over its own group (folded, a stage's one peer's is the
  // stage's).
  const bool own_groups =
      unfold_ && kind && s_.cluster.stragglers && category_of(op_class) == OpCategory::communication;
  for (const Peer& peer : stage_peers) {
    WorkId peer_work = work_id;
    if (own_groups) {
      OpWork placed = b_->work(work_id);
      placed.comm_group = group_id(*kind, peer.coordinates);
      peer_work = b_->intern_work(placed);
    }
    ops.push_back(b_->add_op(name_id, peer_work, lane_stream(peer, lane)));
  }
  if (lane == Lane::compute && recorder_ == nullptr) last_compute_ops_ = ops;
  // Collectives among a stage's peers; the embedding group spans stages and its caller groups it.
  if (kind == CommGroupKind::dp && replicas_ > 1 && recorder_ == nullptr && is_collective_class(op_class)) {
    join_replicas(stage, name, ops);
  }
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

PerPeer<TensorId> TrainingGraphBuilder::add_tensors(int stage, Bytes bytes, TensorKind kind, std::string_view name) {
  PerPeer<TensorId> tensors;
  for (const Peer& peer : peers(stage)) {
    const TensorId tensor = b_->add_tensor(name, peer.device, kind, bytes);
    tensors.push_back(recorder_ != nullptr ? PassRecorder::tag(tensor) : tensor);
  }
  return tensors;
}

void TrainingGraphBuilder::consume(const PerPeer<OpId>& ops, const PerPeer<TensorId>& tensors) {
  if (tensors.empty()) return;
  for (std::size_t i = 0; i < ops.size(); ++i) {
    b_->add_input(ops[i], recorder_ != nullptr ? recorder_->read(tensors[i]) : tensors[i]);
  }
}

void TrainingGraphBuilder::produce(const PerPeer<OpId>& ops, const PerPeer<TensorId>& tensors) {
  if (tensors.empty()) return;
  for (std::size_t i = 0; i < ops.size(); ++i) {
    b_->add_output(ops[i], recorder_ != nullptr ? recorder_->write(tensors[i]) : tensors[i]);
  }
}

void TrainingGraphBuilder::add_workspace(int stage, const PerPeer<OpId>& ops, Bytes bytes) {
  if (bytes > 0) produce(ops, add_tensors(stage, bytes, TensorKind::workspace));
}

void TrainingGraphBuilder::after(const PerPeer<OpId>& before, const PerPeer<OpId>& ops) {
  if (before.empty()) return;
  for (std::size_t i = 0; i < ops.size(); ++i) b_->add_control_edge(before[i], ops[i]);
}

void TrainingGraphBuilder::after(const PerPeer<Gate>& before, const PerPeer<OpId>& ops) {
  if (before.empty()) return;
  for (std::size_t i = 0; i < ops.size(); ++i) {
    if (before[i].signal >= 0) {
      b_->add_signal_edge(before[i].op, static_cast<std::uint32_t>(before[i].signal), ops[i]);
    } else {
      b_->add_control_edge(before[i].op, ops[i]);
    }
  }
}

void TrainingGraphBuilder::create_chunks() {
  std::vector<SampleShape> shapes = microbatch_shapes_ ? microbatch_shapes_->distinct() : std::vector{uniform_sample()};
  for (const auto& [dp, shares] : module_replica_shapes_) {
    for (const SampleShape& share : shares.distinct()) {
      if (std::find(shapes.begin(), shapes.end(), share) == shapes.end()) shapes.push_back(share);
    }
  }
  // A stage runs the kernels its GPU type's architecture gets (node groups of other types).
  for (const std::vector<Peer>& peers : stages_) {
    auto kernels_of = [&](const Peer& peer) { return s_.stack.kernels(s_.cluster.gpu_of_group(peer.pace.node_group)); };
    const KernelChoices kernels = kernels_of(peers.front());
    for (const Peer& peer : peers) {
      if (kernels_of(peer) == kernels) continue;
      throw InputError("--unfold: the ranks of pipeline stage " + std::to_string(peer.coordinates.pp) +
                       " run on GPU types for which the stack chooses different kernels (" +
                       s_.cluster.gpu_of_group(peers.front().pace.node_group).name + " and " +
                       s_.cluster.gpu_of_group(peer.pace.node_group).name +
                       "): simulate without --unfold, which keeps replicas of different types apart");
    }
    auto known = std::find(kernel_sets_.begin(), kernel_sets_.end(), kernels);
    if (known == kernel_sets_.end()) known = kernel_sets_.insert(kernel_sets_.end(), kernels);
    stage_kernels_.push_back(static_cast<int>(known - kernel_sets_.begin()));
  }
  for (std::size_t set = 0; set < kernel_sets_.size(); ++set) {
    context_.kernels = kernel_sets_[set];
    for (const SampleShape& shape : shapes) {
      sample_ = shape;
      create_chunks(chunks_[{shape, static_cast<int>(set)}]);
    }
  }
  for (auto& [shape, positions] : chunks_) {
    for (auto& position_chunks : positions) {
      for (Chunk& chunk : position_chunks) chunk.shape = shape_of(chunk);
    }
  }
}

void TrainingGraphBuilder::create_chunks(std::vector<std::vector<Chunk>>& chunks) {
  const std::vector<int> layers = s_.layers_per_virtual_stage();
  std::vector<int> first_layer(layers.size() + 1, 0);
  std::partial_sum(layers.begin(), layers.end(), first_layer.begin() + 1);
  // The last module's embedding sits with its first layer (on the first stage in a model of one
  // module).
  int embedding_group = 0;
  if (s_.model.multimodal()) {
    const int embedding_layer = s_.model.first_layer(s_.model.modules.size() - 1);
    while (first_layer[static_cast<std::size_t>(embedding_group) + 1] <= embedding_layer) ++embedding_group;
  }
  embedding_position_ = embedding_group % s_.parallel.pp;
  const bool head_shares_embedding = s_.model.tied_embeddings() && embedding_position_ == s_.parallel.pp - 1;
  chunks.assign(static_cast<std::size_t>(s_.parallel.pp), {});
  // Per virtual stage: whether it or a stage it reads (transitively) has backward work.
  std::vector<char> backward_upstream(static_cast<std::size_t>(group_count()), 0);
  for (int group = 0; group < group_count(); ++group) {
    Chunk chunk;
    chunk.group = group;
    const auto g = static_cast<std::size_t>(group);
    // Under per-module meshes, a stage's module shards its part of the slot on its own mesh.
    const ModuleShard shard = module_shard(s_, module_at(s_, group % s_.parallel.pp), context_, sample_);
    chunk.work_share = shard.work_share;
    model_.append_steps(shard.context, shard.sample,
                        {first_layer[g], first_layer[g + 1], group == 0, group + 1 == group_count()},
                        head_shares_embedding, chunk.steps, chunk.block);
    // A block's steps are consecutive: one pass over each run of them.
    chunk.block_has_backward.assign(chunk.steps.size(), 0);
    chunk.has_backward = false;
    for (std::size_t begin = 0, end = 0; begin < chunk.steps.size(); begin = end) {
      bool backward = false;
      for (end = begin; end < chunk.steps.size() && chunk.block[end] == chunk.block[begin]; ++end) {
        backward = backward || chunk.steps[end].backward || chunk.steps[end].weight_grad;
      }
      std::fill(chunk.block_has_backward.begin() + static_cast<std::ptrdiff_t>(begin),
                chunk.block_has_backward.begin() + static_cast<std::ptrdiff_t>(end), backward ? 1 : 0);
      chunk.has_backward = chunk.has_backward || backward;
    }
    backward_upstream[g] = chunk.has_backward ? 1 : 0;
    for (int input : graph_.inputs(group)) {
      const auto i = static_cast<std::size_t>(input);
      if (backward_upstream[i]) chunk.gradient_inputs.push_back(input);
      backward_upstream[g] = backward_upstream[g] || backward_upstream[i];
      chunk.input_bytes += chunks[i % chunks.size()][i / chunks.size()].steps.back().output_bytes;
    }
    chunk.sends_gradient = !chunk.gradient_inputs.empty();
    chunks[g % chunks.size()].push_back(std::move(chunk));
  }
}

std::size_t TrainingGraphBuilder::shape_of(const Chunk& chunk) {
  auto block_kind = [&](const Chunk& c, std::size_t i) { return c.block[i] - (is_layer(c, i) ? c.block[0] : 0); };
  auto same = [&](const Chunk* other) {
    const bool ends_match = (other->group == 0) == (chunk.group == 0) &&
                            (other->group == group_count() - 1) == (chunk.group == group_count() - 1);
    if (!ends_match || other->steps.size() != chunk.steps.size() || other->input_bytes != chunk.input_bytes ||
        other->gradient_inputs.size() != chunk.gradient_inputs.size() ||
        graph_.inputs(other->group).size() != graph_.inputs(chunk.group).size())
      return false;
    for (std::size_t i = 0; i < chunk.steps.size(); ++i) {
      if (!same_work(other->steps[i], chunk.steps[i]) || block_kind(*other, i) != block_kind(chunk, i) ||
          recomputes_layer(*other, i) != recomputes_layer(chunk, i))
        return false;
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

std::int64_t TrainingGraphBuilder::stage_parameters(int stage, bool trainable_only) const {
  std::int64_t total = 0;
  for (const Chunk& chunk : chunks_of(stage)) {
    for (const Step& step : chunk.steps) total += step.trainable || !trainable_only ? step.parameters : 0;
  }
  return total;
}

void TrainingGraphBuilder::create_static_tensors(int stage) {
  const std::int64_t parameters = stage_parameters(stage, false);
  const std::int64_t trained = stage_parameters(stage, true);
  StaticMemory memory = rank_static_memory(s_, parameters, trained, position_of(stage));
  if (s_.parallel.redundant_computation) {
    // Bamboo's backup of the successor's layers: their parameters and optimizer states.
    const int successor = stage_of(replica_of(stage), (position_of(stage) + 1) % s_.parallel.pp);
    const StaticMemory backup = rank_static_memory(s_, stage_parameters(successor, false),
                                                   stage_parameters(successor, true), position_of(successor));
    memory.parameters += backup.parameters;
    memory.optimizer_states += backup.optimizer_states;
  }
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

void TrainingGraphBuilder::emit_stage(int stage) {
  const int pp = s_.parallel.pp;
  const int microbatches = checked_int(s_.microbatches(), "microbatches per pipeline");
  const std::size_t chunks = chunks_of(stage).size();
  records_.assign(chunks * static_cast<std::size_t>(microbatches), {});
  pending_.assign(records_.size(), {});
  last_grad_op_.assign(chunks, {});
  first_forward_op_.assign(chunks, {});
  if ((s_.parallel.zero == 1 || s_.parallel.zero == 2) && s_.options.overlap_param_gather) emit_param_gather(stage);
  for (const PipelineAction& action : pipeline_actions(
           s_.parallel.schedule, graph_.schedule_position(position_of(stage)), pp, s_.parallel.vpp, microbatches)) {
    const std::size_t slot = static_cast<std::size_t>(action.chunk) * static_cast<std::size_t>(microbatches) +
                             static_cast<std::size_t>(action.microbatch);
    sample_ = sample_of(stage, action.microbatch);
    Chunk& chunk = chunks_of(stage, sample_)[static_cast<std::size_t>(action.chunk)];
    switch (action.kind) {
      case PassKind::forward:
        emit_forward(stage, chunk, action, records_[slot]);
        break;
      case PassKind::backward:
        emit_backward(stage, chunk, action, records_[slot], pending_[slot]);
        if (s_.parallel.redundant_computation) note_backward_end(stage, action.microbatch);
        break;
      case PassKind::weight:
        emit_weight_pass(stage, chunk, action, records_[slot], pending_[slot]);
        break;
    }
  }
  stage_last_compute_[stage] = last_compute_ops_;
  emit_gradient_reduction(stage);
}

std::string_view TrainingGraphBuilder::op_name(const Step& step, std::string_view phase, int microbatch) {
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

std::string TrainingGraphBuilder::mb_suffix(int microbatch) const {
  return microbatch < 0 || !name_ops_ ? std::string() : fmt::format(" mb{}", microbatch);
}

bool TrainingGraphBuilder::is_layer(const Chunk& chunk, std::size_t step) const { return chunk.block[step] >= 0; }

bool TrainingGraphBuilder::recomputes_layer(const Chunk& chunk, std::size_t step) const {
  return is_layer(chunk, step) && recomputed_layers_[static_cast<std::size_t>(chunk.block[step])] != 0;
}

}  // namespace weft::training_graph
