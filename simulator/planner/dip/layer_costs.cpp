#include "simulator/planner/dip/layer_costs.hpp"

#include <array>
#include <numeric>

#include "simulator/planner/dip/module_segments.hpp"
#include "simulator/workload/modules/op_factory.hpp"
#include "simulator/workload/tp_overlap_pair.hpp"

namespace weft::dip {

TimeNs LayerCost::latency(LayerPolicy policy) const {
  switch (policy) {
    case LayerPolicy::keep:
      return forward + backward;
    case LayerPolicy::selective:
      return forward + backward + attention_forward;
    case LayerPolicy::full:
      break;
  }
  return forward + recompute_forward + backward;
}

Bytes LayerCost::memory(LayerPolicy policy) const {
  switch (policy) {
    case LayerPolicy::keep:
      return saved;
    case LayerPolicy::selective:
      return selective_saved;
    case LayerPolicy::full:
      break;
  }
  return std::min(input, saved);  // a layer that keeps less than its input keeps that
}

LayerCosts::LayerCosts(const MultimodalModel& model, const ShardContext& base, const ClusterSpec& cluster,
                       bool ideal_network, int data_parallel)
    : model_(model), base_(base), cost_(cluster), ranks_per_stage_(std::int64_t{base.tp} * base.cp * data_parallel) {
  cost_.set_ideal_network(ideal_network);
  std::vector<std::int64_t> ranks(static_cast<std::size_t>(base.tp));
  std::iota(ranks.begin(), ranks.end(), std::int64_t{0});
  tp_group_ = cost_.add_group(make_comm_group(CommGroupKind::tp, ranks, cluster));
  if (base.tp > 1) {
    const std::array<std::int64_t, 2> neighbours{0, 1};
    tp_neighbours_ = cost_.add_group(make_comm_group(CommGroupKind::tp, neighbours, cluster));
  }
}

void LayerCosts::set_tp_overlap(bool overlap) {
  tp_overlap_ = overlap && base_.tp > 1;
  cache_.clear();
}

TimeNs LayerCosts::transfer_time(int from, int to, Bytes bytes) {
  auto [it, added] = pair_groups_.try_emplace({from, to}, 0);
  if (added) {
    const std::array<std::int64_t, 2> ranks{from * ranks_per_stage_, to * ranks_per_stage_};
    it->second = cost_.add_group(make_comm_group(CommGroupKind::pp, ranks, cost_.cluster()));
  }
  OpWork send;
  send.op_class = OpClass::send;
  send.network_bytes = bytes;
  send.shape = {bytes};
  send.comm_group = it->second;
  return cost_.duration(send, cost_.cluster().gpu);
}

TimeNs LayerCosts::data_parallel_allreduce_time(int stage, Bytes bytes) {
  const std::int64_t stride = std::int64_t{base_.tp} * base_.cp;
  auto [it, added] = data_parallel_groups_.try_emplace(stage, 0);
  if (added) {
    std::vector<std::int64_t> ranks;
    for (std::int64_t rank = 0; rank < ranks_per_stage_; rank += stride)
      ranks.push_back(stage * ranks_per_stage_ + rank);
    it->second = cost_.add_group(make_comm_group(CommGroupKind::dp, ranks, cost_.cluster()));
  }
  OpWork reduce = communication_work(OpClass::allreduce, bytes);
  reduce.comm_group = it->second;
  return cost_.duration(reduce, cost_.cluster().gpu);
}

std::size_t LayerCosts::module_of(int layer) const {
  const MultimodalSpec& spec = model_.spec();
  for (std::size_t m = spec.modules.size(); m-- > 0;) {
    if (spec.modules[m].layers() > 0 && spec.first_layer(m) <= layer) return m;
  }
  return 0;
}

const LayerCost& LayerCosts::at(int layer, const SampleShape& shape) {
  const auto key = std::make_pair(layer, shape);
  auto found = cache_.find(key);
  if (found == cache_.end()) found = cache_.emplace(key, compute(layer, shape)).first;
  return found->second;
}

SampleShape LayerCosts::layer_shape(int layer, const SampleShape& stage_shape) const {
  const ModuleSpec& module = model_.spec().modules[module_of(layer)];
  return sub_microbatch_shape(module, stage_shape, module_items(module, stage_shape));
}

std::vector<Step> LayerCosts::steps(int layer, const SampleShape& shape) const {
  std::vector<int> blocks;
  return steps_and_blocks(layer, shape, blocks);
}

std::vector<Step> LayerCosts::steps_and_blocks(int layer, const SampleShape& shape, std::vector<int>& blocks) const {
  const int layers = model_.layer_count();
  std::vector<Step> steps;
  model_.append_steps(base_, shape, {layer, layer + 1, layer == 0, layer + 1 == layers}, false, steps, blocks);
  return steps;
}

std::optional<TimeNs> LayerCosts::overlapped_pair(const std::vector<Step>& steps, const std::vector<int>& blocks,
                                                  std::size_t i) const {
  // As TrainingGraphBuilder::tp_overlap_at pairs steps: two forward steps of one transformer layer.
  if (!tp_overlap_ || i + 1 >= steps.size() || blocks[i] < 0 || blocks[i] != blocks[i + 1]) return std::nullopt;
  const Step& first = steps[i];
  const Step& second = steps[i + 1];
  const std::int64_t tp = base_.tp;
  const TpOverlapPair pair = tp_overlap_pair(first, second, tp);
  const DeviceSpec& gpu = cost_.cluster().gpu;
  if (pair == TpOverlapPair::gather_then_gemm) {
    // Ring exchange: TP GEMM parts, each after the shard the one before it passed on; with parts
    // of g and transfers of c, g + (TP - 1) max(g, c).
    OpWork transfer;
    transfer.op_class = OpClass::send;
    transfer.network_bytes = first.forward->network_bytes / tp;
    transfer.shape = {transfer.network_bytes};
    transfer.comm_group = tp_neighbours_;
    const TimeNs part = cost_.duration(gemm_row_part(*second.forward, tp), gpu);
    return part + (tp - 1) * std::max(part, cost_.duration(transfer, gpu));
  }
  if (pair == TpOverlapPair::gemm_then_scatter) {
    // Pipeline: GEMM quarters on the SMs the reduce-scatters leave, each quarter's reduce-scatter
    // after it and after the one before: g + c + (parts - 1) max(g, c).
    OpWork part = gemm_row_part(*first.forward, kTpOverlapPipelineParts);
    part.reserved_sms = kTpOverlapPipelineSms;
    OpWork scatter = *second.forward;
    scatter.network_bytes /= kTpOverlapPipelineParts;
    scatter.shape = {scatter.network_bytes};
    scatter.comm_group = tp_group_;
    const TimeNs g = cost_.duration(part, gpu);
    const TimeNs c = cost_.duration(scatter, gpu);
    return g + c + (kTpOverlapPipelineParts - 1) * std::max(g, c);
  }
  return std::nullopt;
}

LayerCost LayerCosts::compute(int layer, const SampleShape& shape) const {
  std::vector<int> blocks;
  const std::vector<Step> steps = steps_and_blocks(layer, shape, blocks);
  const DeviceSpec& gpu = cost_.cluster().gpu;
  auto time = [&](const std::optional<OpWork>& work, std::optional<CommGroupKind> comm) -> TimeNs {
    if (!work) return 0;
    if (category_of(work->op_class) != OpCategory::communication) return cost_.duration(*work, gpu);
    if (comm != CommGroupKind::tp) return 0;  // only tensor parallelism communicates inside a stage
    OpWork placed = *work;
    placed.comm_group = tp_group_;
    return cost_.duration(placed, gpu);
  };
  LayerCost out;
  std::optional<TimeNs> overlapped;  // the pair's time, on its first step; its second adds none
  for (std::size_t i = 0; i < steps.size(); ++i) {
    const Step& step = steps[i];
    const TimeNs forward = time(step.forward, step.comm);
    out.recompute_forward += forward;
    if (overlapped) {
      overlapped.reset();
    } else if ((overlapped = overlapped_pair(steps, blocks, i))) {
      out.forward += *overlapped;
    } else {
      out.forward += forward;
    }
    if (step.attention_core) out.attention_forward += forward;
    out.saved += step.saved_bytes;
    out.selective_saved += step.saved_bytes - step.recomputable_bytes;
    out.training_flops += step.model_flops * step.training_flops_factor;
    if (step.attention_core) out.attention_flops += step.model_flops * step.training_flops_factor;
    out.parameters += step.parameters;
    out.trained += step.trainable ? step.parameters : 0;
  }
  // The backward pass, last step first. A tensor-parallel collective of the input gradient runs
  // on its own stream while the weight gradient of the step after it computes (the simulator's
  // builder, as Megatron, overlaps them): only what outlasts that GEMM adds to the pass.
  TimeNs overlappable = 0;
  for (std::size_t k = steps.size(); k-- > 0;) {
    const Step& step = steps[k];
    const TimeNs backward = time(step.backward, step.comm);
    const bool collective = step.backward && category_of(step.backward->op_class) == OpCategory::communication;
    if (collective) {
      out.backward += backward - std::min(backward, overlappable);
      overlappable = 0;
      continue;
    }
    const TimeNs weight = time(step.weight_grad, step.comm) + time(step.regather, step.comm);
    out.backward += backward + weight;
    if (step.attention_core) out.attention_backward += backward + weight;
    overlappable = weight;
  }
  const std::size_t module = module_of(layer);
  const ModuleSpec& spec = model_.spec().modules[module];
  const ShardContext context = module_context(spec, base_, shape);
  if (module_tokens(spec, shape) > 0)
    out.input = context.sharded_tokens() * spec.model.hidden * context.element_bytes();
  return out;
}

}  // namespace weft::dip
