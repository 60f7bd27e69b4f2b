#include "simulator/workload/training_graph_builder.hpp"

#include <algorithm>

#include "simulator/workload/modules/op_factory.hpp"
#include "simulator/workload/optimizer_step.hpp"

namespace weft::training_graph {

std::int64_t TrainingGraphBuilder::bucket_parameters(int stage) const {
  if (s_.options.dp_bucket_parameters > 0) return s_.options.dp_bucket_parameters;
  return std::max<std::int64_t>(40'000'000, 1'000'000LL * dims_.dp_at(position_of(stage)));
}

std::vector<TrainingGraphBuilder::Bucket> TrainingGraphBuilder::buckets(int stage) const {
  std::vector<Bucket> out(1);
  const auto& chunks = chunks_of(stage);
  for (std::size_t c = chunks.size(); c-- > 0;) {
    for (std::size_t i = chunks[c].steps.size(); i-- > 0;) {
      const Step& step = chunks[c].steps[i];
      if (step.parameters == 0 || !step.trainable) continue;
      if (out.back().parameters >= bucket_parameters(stage)) out.emplace_back();
      out.back().parameters += step.parameters;
      out.back().steps.emplace_back(c, i);
    }
  }
  if (out.back().parameters == 0) out.pop_back();
  return out;
}

OpWork TrainingGraphBuilder::bucket_reduction(const Bucket& bucket) const {
  // Sharded optimizer states (ZeRO-1/2): each rank keeps its shard of the reduced gradients.
  return communication_work(s_.parallel.zero >= 1 ? OpClass::reducescatter : OpClass::allreduce,
                            s_.stack.gradient_bytes(s_.training.dtype) * bucket.parameters);
}

void TrainingGraphBuilder::emit_gradient_reduction(int stage) {
  const bool sharded = s_.parallel.zero >= 1;
  // ZeRO-3 reduce-scatters each layer's gradients in its backward pass (training_sharded_layers.cpp).
  if (dp_ranks_reduced(stage) == 1 || s_.parallel.zero >= 3) return;
  const std::vector<Bucket> stage_buckets = buckets(stage);
  for (std::size_t k = 0; k < stage_buckets.size(); ++k) {
    const Bucket& bucket = stage_buckets[k];
    const OpWork reduction = bucket_reduction(bucket);
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
    if (s_.parallel.hybrid_sharding()) {
      gradient_syncs_[stage].push_back(reduce_over_shard_replicas(
          stage, name("grad all-reduce over shard replicas bucket {}", k), reduction.network_bytes, ops));
    }
  }
}

OpWork TrainingGraphBuilder::shard_replica_reduction(int stage, Bytes gradient_bytes) {
  OpWork work = communication_work(OpClass::allreduce, gradient_bytes / s_.parallel.zero_shards());
  work.comm_group = shard_replica_group(stage);
  return work;
}

std::uint32_t TrainingGraphBuilder::shard_replica_group(int stage) {
  std::uint32_t& id = shard_replica_groups_[static_cast<std::size_t>(stage)];
  if (id != 0) return id;
  const RankCoordinates& c = stages_[static_cast<std::size_t>(stage)].front().coordinates;
  const int width = s_.parallel.shard_dp();
  std::vector<std::int64_t> ranks;
  for (int dp = c.dp % width; dp < dims_.dp; dp += width) ranks.push_back(dims_.rank_of({c.tp, c.cp, dp, c.pp}));
  id = cost_->add_group(make_comm_group(CommGroupKind::dp, ranks, s_.cluster));
  return id;
}

TimeNs TrainingGraphBuilder::shard_replica_reduction_time(int stage, Bytes gradient_bytes) {
  if (!s_.parallel.hybrid_sharding()) return 0;
  return cost_->duration(shard_replica_reduction(stage, gradient_bytes), stage_gpu(stage));
}

PerPeer<OpId> TrainingGraphBuilder::reduce_over_shard_replicas(int stage, std::string_view label, Bytes gradient_bytes,
                                                               const PerPeer<OpId>& reduce_scatter) {
  // Counted as data-parallel communication; folded, a stage's one peer joins no simulated group.
  const PerPeer<OpId> ops = add_ops(stage, label, b_->intern_work(shard_replica_reduction(stage, gradient_bytes)),
                                    CommGroupKind::dp, Lane::shard_replicas);
  after(reduce_scatter, ops);
  return ops;
}

void TrainingGraphBuilder::emit_param_gather(int stage) {
  const std::vector<Bucket> stage_buckets = buckets(stage);
  param_gathers_.assign(stage_buckets.size(), {});
  param_gather_chunks_.assign(stage_buckets.size(), {});
  // Buckets hold parameters in backward order; the forward needs them the other way round.
  for (std::size_t k = stage_buckets.size(); k-- > 0;) {
    const OpWork gather =
        communication_work(OpClass::allgather, bytes_per_element(s_.training.dtype) * stage_buckets[k].parameters);
    param_gathers_[k] = add_ops(stage, name("param all-gather bucket {}", k),
                                placed_work(gather, CommGroupKind::dp, stage), CommGroupKind::dp, Lane::data_parallel);
    for (const auto& [chunk, step] : stage_buckets[k].steps) param_gather_chunks_[k].push_back(chunk);
    if (!s_.options.overlap_param_gather) after(optimizer_ops_[stage], param_gathers_[k]);
  }
}

void TrainingGraphBuilder::join_replicas(int stage, std::string_view name, const PerPeer<OpId>& ops) {
  const std::size_t nth = replica_collectives_of_stage_[static_cast<std::size_t>(stage)]++;
  auto& [collective_name, members] = replica_collectives_[{position_of(stage), nth}];
  collective_name = name;
  members.insert(members.end(), ops.begin(), ops.end());
}

void TrainingGraphBuilder::group_replica_collectives() {
  for (const auto& [key, collective] : replica_collectives_) b_->add_collective(collective.first, collective.second);
}

void TrainingGraphBuilder::after_param_gather(int chunk, const PerPeer<OpId>& first_forward) {
  if (s_.parallel.zero < 1 || s_.parallel.zero >= 3 || !s_.options.overlap_param_gather) return;
  for (std::size_t k = 0; k < param_gathers_.size(); ++k) {
    const auto& chunks = param_gather_chunks_[k];
    if (std::find(chunks.begin(), chunks.end(), static_cast<std::size_t>(chunk)) != chunks.end()) {
      after(param_gathers_[k], first_forward);
    }
  }
}

void TrainingGraphBuilder::emit_tied_embedding_sync(int replica) {
  // Nothing to synchronize where the head shares the table on one stage, or the table is frozen.
  if (!s_.model.tied_embeddings() || s_.model.modules.back().frozen || embedding_position_ == s_.parallel.pp - 1)
    return;
  const ModelSpec& model = s_.model.modules.back().model;
  const std::int64_t table = (model.padded_vocab() + s_.parallel.tp - 1) / s_.parallel.tp * model.hidden;
  const OpWork reduction = communication_work(OpClass::allreduce, s_.stack.gradient_bytes(s_.training.dtype) * table);
  const int first = stage_of(replica, embedding_position_);
  const int last = stage_of(replica, s_.parallel.pp - 1);
  // One communicator: the first stage's rank and the last stage's rank with the same coordinates.
  const WorkId work_id = placed_work(reduction, CommGroupKind::embedding, first);
  const PerPeer<OpId> first_ops =
      add_ops(first, "embedding grad all-reduce", work_id, CommGroupKind::embedding, Lane::data_parallel);
  const PerPeer<OpId> last_ops =
      add_ops(last, "embedding grad all-reduce", work_id, CommGroupKind::embedding, Lane::data_parallel);
  for (std::size_t i = 0; i < first_ops.size(); ++i) {
    b_->add_collective("embedding grad all-reduce", std::vector<OpId>{first_ops[i], last_ops[i]});
  }
  gradient_syncs_[first].push_back(first_ops);
  gradient_syncs_[last].push_back(last_ops);
  after(stage_last_compute_[first], first_ops);
  after(stage_last_compute_[last], last_ops);
}

void TrainingGraphBuilder::emit_optimizer(int stage) {
  const std::int64_t trained = stage_parameters(stage, true);
  if (trained == 0) return;  // every module on the stage is frozen
  const OptimizerStepSize size{
      trained / optimizer_shards(stage),
      rank_static_memory(s_, stage_parameters(stage, false), trained, position_of(stage)).gradients};
  // The step's kernels run one after another on the compute stream; the first waits for the
  // gradients, the last is the update the parameter gathers wait for.
  PerPeer<OpId> previous;
  for (const OptimizerKernel& kernel : optimizer_step_kernels(s_.stack, s_.training.dtype, size)) {
    const PerPeer<OpId> ops = add_ops(stage, kernel.name, b_->intern_work(kernel.work), std::nullopt);
    if (previous.empty()) {
      for (const auto& sync : gradient_syncs_[stage]) after(sync, ops);
      // ZeRO-3's last reduce-scatters are inside the stage's last passes.
      if (s_.parallel.zero >= 3) after(stage_last_compute_[stage], ops);
    } else {
      after(previous, ops);
    }
    const auto& tensors = static_tensors_[stage];
    consume(ops, tensors.gradients);
    if (kernel.work.kernel == Kernel::adamw_fused) consume(ops, tensors.optimizer_states);
    previous = ops;
  }
  optimizer_ops_[stage] = previous;
  if (s_.parallel.zero == 1 || s_.parallel.zero == 2) {
    if (!s_.options.overlap_param_gather) emit_param_gather(stage);
  }
}

double TrainingGraphBuilder::model_flops_per_iteration() const {
  // A microbatch's model FLOPs at `position` on `dp` replicas of its mesh, against the plan's
  // tp x dp ranks (per-module meshes differ).
  auto add_flops = [&](double& sum, const std::vector<std::vector<Chunk>>& positions, int position, int dp) {
    const double ranks = static_cast<double>(dims_.tp_at(position)) * dp / (static_cast<double>(dims_.tp) * dims_.dp);
    for (const Chunk& chunk : positions[static_cast<std::size_t>(position)]) {
      for (const Step& step : chunk.steps)
        sum += step.model_flops * step.training_flops_factor * ranks * chunk.work_share;
    }
  };
  std::map<SampleShape, double> microbatches_of_shape;  // over every replica
  if (microbatch_shapes_) {
    for (const SampleShape& shape : microbatch_shapes_->shapes) microbatches_of_shape[shape] += 1.0;
  } else {
    microbatches_of_shape[uniform_sample()] = static_cast<double>(s_.microbatches()) * dims_.dp;
  }
  double total = 0.0;
  for (const auto& [key, positions] : chunks_) {
    // Model FLOPs do not depend on kernels: one kernel set counts.
    if (key.second != 0) continue;
    const auto count = microbatches_of_shape.find(key.first);
    if (count == microbatches_of_shape.end()) continue;  // a share of a slot, counted below
    double per_microbatch = 0.0;
    for (int position = 0; position < static_cast<int>(positions.size()); ++position) {
      if (microbatch_shapes_ && position_shapes_[static_cast<std::size_t>(position)] != nullptr) continue;
      add_flops(per_microbatch, positions, position, dims_.dp_at(position));
    }
    total += per_microbatch * count->second;
  }
  // On per-sample data, an image encoder on a mesh of another DP runs each replica's share of
  // each slot: each share counts as one replica's microbatch does above.
  for (int position = 0; microbatch_shapes_ && position < s_.parallel.pp; ++position) {
    const MicrobatchShapes* shares = position_shapes_[static_cast<std::size_t>(position)];
    if (shares == nullptr) continue;
    for (const SampleShape& share : shares->shapes) add_flops(total, chunks_.at({share, 0}), position, dims_.dp);
  }
  // On every TP and CP shard.
  return total * dims_.tp * dims_.cp;
}

}  // namespace weft::training_graph
