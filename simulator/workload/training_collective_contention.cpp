// Compute slowed by the data-parallel collectives it overlaps (collective_contention.hpp): the
// windows where the graph runs them beside compute, and the SMs they hold averaged over each.
//   - ZeRO-3 (training_sharded_layers.cpp): each layer's compute beside the next layer's
//     parameter gather and, in the backward pass, the previous layer's gradient reduce-scatter;
//   - below ZeRO-3, with the gradient reduction overlapped: the gradient-making pass (backward, or
//     weight with split weight gradients) of each chunk's last microbatch, from the step where
//     the stage's first bucket fills, beside every bucket but the last (the last is issued once
//     the pass's final gradients are made, after its compute).
// The ZeRO-1/2 parameter gather is waited for by each chunk's first forward (after_param_gather),
// so no compute runs beside it. Pipeline and context-parallel transfers and TP collectives are not
// counted here (docs/collectives.md).
#include <algorithm>
#include <array>
#include <bit>

#include "simulator/core/hash_mix.hpp"
#include "simulator/workload/collective_contention.hpp"
#include "simulator/workload/training_graph_builder.hpp"

namespace weft::training_graph {

const DeviceSpec& TrainingGraphBuilder::stage_gpu(int stage) const {
  // At full speed: a straggler's window keeps the share of its healthy peers', so that a folded
  // rank (at its slowest GPU's pace) and the ranks it stands for are slowed alike.
  return s_.cluster.gpu_of_group(stages_[static_cast<std::size_t>(stage)].front().pace.node_group);
}

TimeNs TrainingGraphBuilder::collective_time(int stage, const OpWork& work, CommGroupKind kind) {
  OpWork placed = work;
  placed.comm_group = stage_group(kind, stage);
  return cost_->duration(placed, stage_gpu(stage));
}

TimeNs TrainingGraphBuilder::step_compute_time(int stage, const Chunk& chunk, std::size_t k, PassWork pass) {
  const DeviceSpec& gpu = stage_gpu(stage);
  auto& costed = compute_alone_ns_[&gpu];
  const Step& step = chunk.steps[k];
  TimeNs total = 0;
  auto add = [&](const std::optional<OpWork>& work) {
    if (!work || category_of(work->op_class) != OpCategory::compute) return;
    auto [it, fresh] = costed.try_emplace(*work, 0);
    if (fresh) it->second = cost_->duration(*work, gpu);
    total += it->second;
  };
  if (pass == PassWork::forward) {
    add(step.forward);
    return total;
  }
  if (pass == PassWork::weight || !split_weight_grads_) add(step.weight_grad);
  if (pass == PassWork::weight) return total;
  add(step.backward);
  // What the backward pass recomputes itself (backward_body): the chunk's last layer (or group of
  // layers), recomputed in its own pass before the gradient arrives, is not.
  const bool layer = recomputes_layer(chunk, k) && chunk.block_has_backward[k] &&
                     !(recomputes_before_gradient(chunk) &&
                       recompute_group(chunk, k) == recompute_group(chunk, chunk.steps.size() - 1));
  const bool selective = s_.recomputes_attention_core() && step.attention_core && step.recomputable_bytes > 0;
  if (layer && s_.per_op_checkpointing()) {
    // As recompute_layer runs it: the layer's first step whole, the others as far as not kept.
    const bool first = k == 0 || chunk.block[k - 1] != chunk.block[k];
    if (first) {
      add(step.forward);
    } else if (step.op_recompute_share > 0.0) {
      add(step.op_recompute ? step.op_recompute : step.forward);
    }
  } else if (layer || selective) {
    add(step.forward);
  }
  return total;
}

double TrainingGraphBuilder::collective_share(int stage, TimeNs compute, TimeNs collective) {
  if (!s_.options.collective_contention) return 0.0;
  const DeviceSpec& gpu = stage_gpu(stage);
  const bool across_nodes = cost_->group(stage_group(CommGroupKind::dp, stage)).nodes > 1;
  const int held =
      across_nodes && gpu.collective_sms_across_nodes > 0 ? gpu.collective_sms_across_nodes : gpu.collective_sms;
  return averaged_collective_sms(compute, collective, gpu.streaming_multiprocessors, held);
}

bool TrainingGraphBuilder::in_gradient_window(int stage, int mb, std::string_view phase) const {
  const std::string_view gradients = split_weight_grads_ ? "weight" : "bwd";
  return phase == gradients && mb == s_.microbatches() - 1 && s_.options.collective_contention &&
         s_.options.overlap_grad_reduce && s_.parallel.zero < 3 && dp_ranks_reduced(stage) > 1;
}

const TrainingGraphBuilder::GradientWindow& TrainingGraphBuilder::gradient_window(int stage, int mb) {
  auto [window, made] = gradient_windows_.try_emplace(stage);
  if (!made) return window->second;
  const std::vector<Bucket> stage_buckets = buckets(stage);
  if (stage_buckets.size() < 2) return window->second;  // one bucket: issued after the compute
  const std::vector<Chunk>& chunks = chunks_of(stage, sample_of(stage, mb));
  window->second.before_first_bucket.resize(chunks.size());
  for (std::size_t c = 0; c < chunks.size(); ++c) window->second.before_first_bucket[c].resize(chunks[c].steps.size());
  // The backward pass runs a chunk's steps last to first: every step from the first bucket's
  // lowest one in the chunk up runs before the bucket can be reduced.
  for (const auto& [chunk, step] : stage_buckets.front().steps) {
    auto& before = window->second.before_first_bucket[chunk];
    std::fill(before.begin() + static_cast<std::ptrdiff_t>(step), before.end(), true);
  }
  TimeNs collectives = 0;
  for (std::size_t k = 0; k + 1 < stage_buckets.size(); ++k) {
    const OpWork reduction = bucket_reduction(stage_buckets[k]);
    collectives += collective_time(stage, reduction, CommGroupKind::dp) +
                   shard_replica_reduction_time(stage, reduction.network_bytes);
  }
  // The compute from the first bucket's last gradient on: steps after it in backward order are the
  // other chunks' and this chunk's below the bucket's.
  const PassWork pass = split_weight_grads_ ? PassWork::weight : PassWork::backward;
  TimeNs compute = 0;
  for (std::size_t c = 0; c < chunks.size(); ++c) {
    for (std::size_t k = 0; k < chunks[c].steps.size(); ++k) {
      if (!window->second.before_first_bucket[c][k]) compute += step_compute_time(stage, chunks[c], k, pass);
    }
  }
  window->second.share = collective_share(stage, compute, collectives);
  return window->second;
}

void TrainingGraphBuilder::enter_gradient_step(const Chunk& chunk, std::size_t step) {
  if (gradient_window_ == nullptr || gradient_window_->before_first_bucket.empty()) return;
  const bool before = gradient_window_->before_first_bucket[chunk_index(chunk)][step];
  collective_sms_share_ = before ? 0.0 : gradient_window_->share;
}

std::uint64_t TrainingGraphBuilder::contention_key(int stage, const Chunk& chunk) {
  if (!s_.options.collective_contention) return 0;
  std::uint64_t key = 0;
  if (gradient_window_ != nullptr && !gradient_window_->before_first_bucket.empty()) {
    // The share, and which of the chunk's steps come before the first bucket fills.
    key = std::bit_cast<std::uint64_t>(gradient_window_->share);
    for (const bool before : gradient_window_->before_first_bucket[chunk_index(chunk)]) key = hash_mix(key, before);
  }
  // ZeRO-3's per-layer shares follow the stage's DP group, which the pace does not hold.
  if (s_.parallel.zero >= 3 && dp_ranks_reduced(stage) > 1) {
    // The shard group, and under hybrid sharding the group of its replicas.
    const std::array<std::uint32_t, 2> groups{stage_group(CommGroupKind::dp, stage),
                                              s_.parallel.hybrid_sharding() ? shard_replica_group(stage) : 0};
    for (const std::uint32_t id : groups) {
      if (id == 0) continue;
      const CommGroup& group = cost_->group(id);
      for (const double part : {static_cast<double>(group.size), static_cast<double>(group.ranks_per_node),
                                static_cast<double>(group.nodes), group.network_speed, group.nvlink_speed}) {
        key = hash_mix(key, std::bit_cast<std::uint64_t>(part));
      }
    }
  }
  return key;
}

WorkId TrainingGraphBuilder::beside_collectives(int stage, WorkId work_id) {
  OpWork work = b_->work(work_id);
  // An op already on fewer SMs (Transformer Engine's userbuffers) loses the same fraction of them.
  const double sms = stage_gpu(stage).streaming_multiprocessors;
  work.reserved_sms += collective_sms_share_ * (sms - work.reserved_sms) / sms;
  return b_->intern_work(work);
}

TrainingGraphBuilder::GradientWindowScope::GradientWindowScope(TrainingGraphBuilder& builder, int stage, int mb,
                                                               std::string_view phase)
    : b_(builder), outer_window_(builder.gradient_window_), outer_share_(builder.collective_sms_share_) {
  if (b_.in_gradient_window(stage, mb, phase)) b_.gradient_window_ = &b_.gradient_window(stage, mb);
}

TrainingGraphBuilder::GradientWindowScope::~GradientWindowScope() {
  b_.gradient_window_ = outer_window_;
  b_.collective_sms_share_ = outer_share_;
}

}  // namespace weft::training_graph
