// ZeRO-3 as FSDP runs it (full sharding): each layer's parameters all-gathered over data
// parallelism before its forward and again before its backward, the next layer's gather issued
// as the layer starts (one layer ahead), the gathered copy freed when the layer's ops are done,
// and the layer's gradients reduce-scattered as soon as its backward has made them.
#include "simulator/workload/training_sharded_layers.hpp"

#include <algorithm>
#include <utility>

#include "simulator/workload/modules/op_factory.hpp"

namespace weft::training_graph {

ShardedLayers::ShardedLayers(TrainingGraphBuilder& builder, int stage, const Chunk& chunk, bool backward, int mb,
                             bool prefetch)
    : b_(builder),
      stage_(stage),
      chunk_(chunk),
      backward_(backward),
      mb_(mb),
      prefetch_(prefetch),
      unit_of_step_(chunk.steps.size(), -1) {
  if (b_.s_.parallel.zero < 3 || b_.optimizer_shards(stage_) == 1) return;
  // A unit: the steps of one block (a layer, or the input or output block) that holds
  // parameters, where some step has work in this pass.
  auto works = [&](const Step& step) {
    return backward ? step.backward || step.weight_grad : step.forward.has_value();
  };
  for (std::size_t i = 0; i < chunk.steps.size();) {
    Unit unit{i, i, 0, 0};
    bool has_work = false;
    std::size_t end = i;
    for (; end < chunk.steps.size() && chunk.block[end] == chunk.block[i]; ++end) {
      // A tied head gathers the embedding table it reads.
      unit.parameters += chunk.steps[end].parameters + chunk.steps[end].shared_parameters;
      if (chunk.steps[end].trainable) unit.trained += chunk.steps[end].parameters;
      has_work = has_work || works(chunk.steps[end]);
      unit.last = end;
    }
    if (unit.parameters > 0 && has_work) {
      for (std::size_t k = unit.first; k <= unit.last; ++k) unit_of_step_[k] = static_cast<int>(units_.size());
      units_.push_back(unit);
    }
    i = end;
  }
  if (backward) {
    std::reverse(units_.begin(), units_.end());
    for (int& unit : unit_of_step_) unit = unit < 0 ? -1 : static_cast<int>(units_.size()) - 1 - unit;
  }
  state_.resize(units_.size());
  const auto pass = backward ? TrainingGraphBuilder::PassWork::backward : TrainingGraphBuilder::PassWork::forward;
  for (const Unit& unit : units_) {
    TimeNs compute = 0;
    for (std::size_t k = unit.first; k <= unit.last; ++k) compute += b_.step_compute_time(stage, chunk, k, pass);
    unit_compute_.push_back(compute);
  }
  outer_share_ = b_.collective_sms_share_;
}

ShardedLayers::~ShardedLayers() {
  b_.layer_parameters_ = {};
  if (!units_.empty()) b_.collective_sms_share_ = outer_share_;
}

TimeNs ShardedLayers::gather(std::size_t unit, const PerPeer<OpId>& after) {
  // The whole layer once gathered, in the training dtype.
  const Bytes bytes = bytes_per_element(b_.s_.training.dtype) * units_[unit].parameters;
  const OpWork work = communication_work(OpClass::allgather, bytes);
  State& state = state_[unit];
  state.gathered = b_.add_tensors(stage_, bytes, TensorKind::buffer);
  const PerPeer<OpId> ops =
      b_.add_ops(stage_, b_.name("param all-gather {}{} unit {}", backward_ ? "bwd" : "fwd", b_.mb_suffix(mb_), unit),
                 b_.placed_work(work, CommGroupKind::dp, stage_), CommGroupKind::dp, Lane::data_parallel);
  b_.produce(ops, state.gathered);
  b_.after(after, ops);
  state.issued = true;
  return b_.collective_time(stage_, work, CommGroupKind::dp);
}

void ShardedLayers::enter(std::size_t step) {
  const int unit = unit_of_step_[step];
  if (unit == current_) return;
  finish_unit();
  current_ = unit;
  if (unit < 0) {
    b_.collective_sms_share_ = outer_share_;
    beside_ = 0;
    return;
  }
  const auto u = static_cast<std::size_t>(unit);
  if (!state_[u].issued) gather(u, {});  // waited for: nothing runs beside it
  // One layer ahead: the next layer's gather starts once the layer before this one is done.
  if (prefetch_ && u + 1 < units_.size() && !state_[u + 1].issued)
    beside_ += gather(u + 1, u > 0 ? state_[u - 1].last_ops : PerPeer<OpId>{});
  // The layer's compute runs beside that gather and the reduce-scatter just issued.
  b_.collective_sms_share_ = b_.collective_share(stage_, unit_compute_[u], std::exchange(beside_, 0));
  b_.layer_parameters_ = state_[u].gathered;
}

void ShardedLayers::note(std::size_t step, const PerPeer<OpId>& ops, bool gradient) {
  const int unit = unit_of_step_[step];
  if (unit < 0) return;
  State& state = state_[static_cast<std::size_t>(unit)];
  b_.consume(ops, state.gathered);
  state.last_ops = ops;
  if (gradient && chunk_.steps[step].trainable) state.gradient_ops.push_back(ops);
}

void ShardedLayers::finish_unit() {
  b_.layer_parameters_ = {};
  if (current_ < 0 || !backward_) return;
  const Unit& unit = units_[static_cast<std::size_t>(current_)];
  State& state = state_[static_cast<std::size_t>(current_)];
  if (unit.trained == 0 || state.gradient_ops.empty()) return;
  // The layer's whole gradients live from its first gradient op until they are reduce-scattered.
  const Bytes bytes = b_.s_.stack.gradient_bytes(b_.s_.training.dtype) * unit.trained;
  const PerPeer<TensorId> gradients = b_.add_tensors(stage_, bytes, TensorKind::buffer);
  b_.produce(state.gradient_ops.front(), gradients);
  const OpWork work = communication_work(OpClass::reducescatter, bytes);
  const PerPeer<OpId> ops =
      b_.add_ops(stage_, b_.name("grad reduce-scatter{} unit {}", b_.mb_suffix(mb_), current_),
                 b_.placed_work(work, CommGroupKind::dp, stage_), CommGroupKind::dp, Lane::data_parallel);
  beside_ += b_.collective_time(stage_, work, CommGroupKind::dp);
  for (const PerPeer<OpId>& gradient_ops : state.gradient_ops) b_.after(gradient_ops, ops);
  b_.consume(ops, gradients);
  // Hybrid sharding: the shard is then summed over the groups that replicate it.
  PerPeer<OpId> synced = ops;
  if (b_.s_.parallel.hybrid_sharding()) {
    synced = b_.reduce_over_shard_replicas(
        stage_, b_.name("grad all-reduce over shard replicas{} unit {}", b_.mb_suffix(mb_), current_), bytes, ops);
    beside_ += b_.shard_replica_reduction_time(stage_, bytes);
  }
  // Outside a recorded pass the optimizer waits for it; inside, for the pass that holds it.
  if (b_.recorder_ == nullptr) b_.gradient_syncs_[stage_].push_back(synced);
}

void ShardedLayers::finish() {
  finish_unit();
  current_ = -1;
  if (!units_.empty()) b_.collective_sms_share_ = outer_share_;
  beside_ = 0;
}

}  // namespace weft::training_graph
