#include "simulator/planner/iteration_bound.hpp"

#include <algorithm>
#include <numeric>

#include "simulator/core/checked_math.hpp"
#include "simulator/workload/multimodal_model.hpp"
#include "simulator/workload/op_parts.hpp"
#include "simulator/workload/pipeline_schedule.hpp"

namespace weft {
namespace {

// The least a step's op costs however the graph builder emits it: whole, or (where it may split
// it) as its parts.
class StepPricer {
 public:
  StepPricer(const ClusterCostModel& cost, const TrainingScenario& plan, std::uint32_t tp_group, TimeNs kernel_gap)
      : cost_(cost),
        tp_(plan.parallel.tp),
        overlaps_tp_(plan.overlaps_tp_communication()),
        same_tp_placements_(plan.cluster.gpus_per_node % plan.parallel.tp == 0),
        tp_group_(tp_group),
        kernel_gap_(kernel_gap) {}

  // A compute op as it is.
  TimeNs whole(const std::optional<OpWork>& work) const {
    const bool computes = work && category_of(work->op_class) != OpCategory::communication;
    return computes ? held(time(*work)) : TimeNs{0};
  }

  // A forward or input-gradient op: ring attention runs one part per KV chunk; TP communication
  // overlap splits a forward GEMM into TP row blocks (ring exchange) or kTpOverlapPipelineParts
  // (pipeline).
  TimeNs least(const Step& step, const std::optional<OpWork>& work, bool forward) const {
    TimeNs least = whole(work);
    if (least == 0) return least;
    if (step.context_parallel_chunks > 1) {
      least = std::min(least,
                       parts(ring_attention_part(*work, step.context_parallel_chunks), step.context_parallel_chunks));
    }
    if (forward && overlaps_tp_) {
      for (const std::int64_t count : {std::int64_t{tp_}, kTpOverlapPipelineParts}) {
        if (splits_into_row_parts(*work, count)) least = std::min(least, parts(gemm_row_part(*work, count), count));
      }
    }
    return least;
  }

  // A forward TP collective: on the compute stream unless the stack overlaps TP communication
  // (then it may run on the TP stream, and counts nothing). Priced at the first TP group's
  // placement, which every stage's TP group has when TP divides the GPUs of a node (TP ranks are
  // consecutive); otherwise it counts nothing either.
  TimeNs synchronous_tp_collective(const Step& step) const {
    if (overlaps_tp_ || !same_tp_placements_ || step.comm != CommGroupKind::tp || !step.forward ||
        category_of(step.forward->op_class) != OpCategory::communication) {
      return 0;
    }
    OpWork placed = *step.forward;
    placed.comm_group = tp_group_;
    return held(time(placed));
  }

 private:
  TimeNs time(const OpWork& work) const { return cost_.duration(work, cost_.cluster().gpu); }
  TimeNs parts(const OpWork& part, std::int64_t count) const { return count * held(time(part)); }
  // How long an op of `duration` holds the compute stream: the next op there starts a kernel gap
  // after it ends. An op priced at nothing may not be in the graph: no gap either.
  TimeNs held(TimeNs duration) const { return duration > 0 ? duration + kernel_gap_ : 0; }

  const ClusterCostModel& cost_;
  int tp_;
  bool overlaps_tp_;
  bool same_tp_placements_;
  std::uint32_t tp_group_;
  TimeNs kernel_gap_;
};

std::vector<LayerComputeTimes> price_layers(const TrainingScenario& plan, const StepPricer& price) {
  const MultimodalModel model(plan.model, plan.parallel.cp_algorithm);
  const ShardContext context = plan.shard_context();
  const int layers = model.layer_count();
  std::vector<LayerComputeTimes> times(static_cast<std::size_t>(layers));
  // A model of one module repeats one layer: its middle layers cost what its second does (as the
  // graph size estimate counts them, graph_size.cpp).
  const bool uniform = !plan.model.multimodal() && layers >= 3;
  std::vector<Step> steps;
  std::vector<int> blocks;
  for (int layer = 0; layer < layers; ++layer) {
    if (uniform && layer > 1 && layer + 1 < layers) {
      times[static_cast<std::size_t>(layer)] = times[1];
      continue;
    }
    steps.clear();
    blocks.clear();
    model.append_steps(context, plan.training.sample(), {layer, layer + 1, layer == 0, layer + 1 == layers}, false,
                       steps, blocks);
    LayerComputeTimes& t = times[static_cast<std::size_t>(layer)];
    // A layer is recomputed only where it has backward work: a frozen module that passes no
    // gradient back is not (training_passes.cpp).
    bool has_backward = false;
    for (std::size_t i = 0; i < steps.size(); ++i) {
      has_backward = has_backward || (blocks[i] >= 0 && (steps[i].backward || steps[i].weight_grad));
    }
    for (std::size_t i = 0; i < steps.size(); ++i) {
      const Step& step = steps[i];
      const TimeNs collective = price.synchronous_tp_collective(step);
      t.forward += price.least(step, step.forward, true) + collective;
      t.input_grad += price.least(step, step.backward, false);
      t.weight_grad += price.whole(step.weight_grad);
      if (blocks[i] < 0 || !has_backward) continue;  // an anchored block (embedding, head, loss): not recomputed
      // A recomputed op runs whole, and its collectives on the compute stream
      // (training_passes.cpp, recompute_layer).
      const TimeNs recomputed = price.whole(step.forward);
      t.full_recompute += recomputed + collective;
      if (step.attention_core && step.recomputable_bytes > 0) t.selective_recompute += recomputed;
      // Per-op checkpointing: what it does not keep (a layer's first step runs whole, which this
      // bound leaves out where that step is kept).
      if (step.op_recompute_share >= 1.0) {
        t.op_recompute += recomputed + collective;
      } else if (step.op_recompute_share > 0.0) {
        t.op_recompute += price.whole(step.op_recompute ? step.op_recompute : step.forward);
      }
    }
  }
  return times;
}

TimeNs recompute_time(const LayerComputeTimes& t, const TrainingScenario& plan) {
  switch (plan.parallel.recompute) {
    case RecomputePolicy::full:
      return t.full_recompute;
    case RecomputePolicy::selective:
      return plan.per_op_checkpointing() ? t.op_recompute : t.selective_recompute;
    case RecomputePolicy::none:
      break;
  }
  return 0;
}

// Per virtual stage, one microbatch's times summed over its layers.
struct VirtualStageTimes {
  TimeNs forward = 0;
  // What its backward pass computes after the gradient arrives and before it sends its own: the
  // input gradients, and the recomputation of every layer but the last (whose recompute may run
  // before the gradient arrives, in a pass of its own under full recompute).
  TimeNs backward_chain = 0;
  TimeNs first_layer_weight_grad = 0;
  TimeNs before_last_input_grad = 0;  // forward, input gradients and recomputation
  TimeNs total = 0;                   // and weight gradients
};

}  // namespace

IterationBound::IterationBound(const TrainingScenario& base) : cost_(base.cluster) {
  cost_.set_ideal_network(base.options.ideal_network);
  cost_.force_algorithm(base.options.collective_algorithm);
  cost_.set_kernel_gap(base.options.kernel_gap);
  kernel_gap_ = cost_.kernel_gap_ns(cost_.cluster().gpu);
}

TimeNs IterationBound::chain(TimeNs held) const { return std::max(TimeNs{0}, held - kernel_gap_); }

const std::vector<LayerComputeTimes>& IterationBound::layer_times(const TrainingScenario& plan) {
  const ShardContext c = plan.shard_context();
  const ContextKey key{c, plan.model.modules.front().model.vocab_multiple, plan.parallel.cp_algorithm,
                       plan.overlaps_tp_communication(), plan.cluster.gpus_per_node % c.tp == 0};
  auto found = cache_.find(key);
  if (found != cache_.end()) return found->second;
  auto [group, added] = tp_groups_.try_emplace(c.tp, 0);
  if (added) {
    std::vector<std::int64_t> ranks(static_cast<std::size_t>(c.tp));
    std::iota(ranks.begin(), ranks.end(), std::int64_t{0});
    group->second = cost_.add_group(make_comm_group(CommGroupKind::tp, ranks, cost_.cluster()));
  }
  return cache_.emplace(key, price_layers(plan, StepPricer(cost_, plan, group->second, kernel_gap_))).first->second;
}

std::optional<TimeNs> IterationBound::operator()(const TrainingScenario& plan) {
  if (plan.data) return std::nullopt;
  const std::vector<LayerComputeTimes>& layers = layer_times(plan);
  const ParallelPlan& p = plan.parallel;
  const std::vector<int> layers_per_virtual_stage = plan.layers_per_virtual_stage();
  // A virtual stage without layers holds its embedding or head apart from any layer: not covered.
  if (std::find(layers_per_virtual_stage.begin(), layers_per_virtual_stage.end(), 0) != layers_per_virtual_stage.end())
    return std::nullopt;
  std::vector<VirtualStageTimes> virtual_stages(layers_per_virtual_stage.size());
  // Per layer, whether it is recomputed; empty where every layer follows the policy (the common
  // case, on a sweep's hot path: no mask is made).
  const std::vector<std::uint8_t> recomputed =
      p.recompute_layers.method == LayerRecompute::Method::all ? std::vector<std::uint8_t>() : plan.recomputed_layers();
  std::size_t layer = 0;
  for (std::size_t v = 0; v < layers_per_virtual_stage.size(); ++v) {
    VirtualStageTimes& vs = virtual_stages[v];
    vs.first_layer_weight_grad = layers[layer].weight_grad;
    for (int i = 0; i < layers_per_virtual_stage[v]; ++i, ++layer) {
      const LayerComputeTimes& t = layers[layer];
      const TimeNs recompute = recomputed.empty() || recomputed[layer] != 0 ? recompute_time(t, plan) : 0;
      vs.forward += t.forward;
      vs.backward_chain += t.input_grad + (i + 1 < layers_per_virtual_stage[v] ? recompute : 0);
      vs.before_last_input_grad += t.forward + t.input_grad + recompute;
      vs.total += t.forward + t.input_grad + t.weight_grad + recompute;
    }
  }
  // Per virtual stage, the first microbatch's forward through the stages it reads (transitively:
  // the longest way from the data), and the way back of its input gradient through them.
  const StageGraph graph = plan.stage_graph();
  std::vector<TimeNs> head(virtual_stages.size(), 0);
  std::vector<TimeNs> drain(virtual_stages.size(), 0);
  for (std::size_t v = 0; v < virtual_stages.size(); ++v) {
    for (int input : graph.inputs(static_cast<int>(v))) {
      const auto u = static_cast<std::size_t>(input);
      head[v] = std::max(head[v], saturating_add(head[u], chain(virtual_stages[u].forward)));
      drain[v] = std::max(drain[v], saturating_add(drain[u], chain(virtual_stages[u].backward_chain)));
    }
  }
  TimeNs bound = 0;
  for (std::size_t s = 0; s < static_cast<std::size_t>(p.pp); ++s) {
    TimeNs work = 0;
    TimeNs before_last_input_grad = 0;
    TimeNs trailing = 0;  // weight gradients that may follow the last input-gradient op of a pass
    for (std::size_t v = s; v < virtual_stages.size(); v += static_cast<std::size_t>(p.pp)) {
      work = saturating_add(work, virtual_stages[v].total);
      before_last_input_grad = saturating_add(before_last_input_grad, virtual_stages[v].before_last_input_grad);
      trailing = std::max(trailing, virtual_stages[v].first_layer_weight_grad);
    }
    const std::int64_t m = plan.microbatches();
    // Its first op waits for the first microbatch's forward through the stages before its first
    // chunk (virtual stage s).
    const TimeNs busy = saturating_add(head[s], chain(saturating_mul(m, work)));
    // Every forward, input gradient and recomputation of the stage comes before its last
    // input-gradient op, whose gradient the stages before it still pass on.
    const TimeNs drained =
        saturating_add(saturating_add(head[s], chain(saturating_mul(m, before_last_input_grad))), drain[s]);
    bound = std::max({bound, busy, drained});
    // Where the backward pass computes the weight gradients (every schedule but zero-bubble), the
    // stage ends with a backward pass: only its first layer's weight gradients follow the last
    // input-gradient op.
    if (!splits_weight_gradients(p.schedule)) bound = std::max(bound, saturating_add(busy - trailing, drain[s]));
  }
  return bound;
}

}  // namespace weft
