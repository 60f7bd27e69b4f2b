#include "simulator/workload/op_parts.hpp"
#include "simulator/workload/training_graph_builder.hpp"
#include "simulator/workload/training_pass_emission.hpp"
#include "simulator/workload/training_sharded_layers.hpp"

#include <algorithm>

namespace weft::training_graph {

void TrainingGraphBuilder::emit_forward(int stage, Chunk& chunk, const PipelineAction& action, ForwardRecord& record) {
  const int mb = action.microbatch;
  // The activations it reads: the first flows into its first step, the others (other encoders'
  // outputs under modality parallelism) are waited for.
  PassValues read;
  for (int input : graph_.inputs(chunk.group)) read.push_back(boundary_tensor({input, mb, false}, stage));
  if (read.empty()) read.emplace_back();
  const PerPeer<TensorId> x = read.front();
  const std::span<const PerPeer<TensorId>> also_read = std::span(read.data(), read.size()).subspan(1);
  PerPeer<OpId> first_op;
  if (composites_) {
    // Escaping: the output; what the steps saved and checkpointed leaves in bundles.
    PassValues escapes;
    first_op = emit_pass(stage, chunk, "fwd", mb, read, escapes, record.bundles, [&](std::vector<PassBundle>& leaving) {
      ForwardRecord inner;
      forward_body(stage, chunk, x, also_read, -1, inner);
      for (std::size_t k = 0; k < chunk.steps.size(); ++k) {
        leave(leaving, route_of_saved(chunk, k, Route::forward_to_backward), member_key(Kept::saved, k),
              inner.saved[k]);
        leave(leaving, route_of_checkpoint(chunk, k), member_key(Kept::checkpoint, k), inner.checkpoint[k]);
      }
      return PassValues{inner.output};
    });
    record.output = escapes[0];
  } else {
    first_op = forward_body(stage, chunk, x, also_read, mb, record);
  }
  if (first_forward_op_[static_cast<std::size_t>(action.chunk)].empty()) {
    first_forward_op_[static_cast<std::size_t>(action.chunk)] = first_op;
    after_param_gather(action.chunk, first_op);
  }
  const int successor = graph_.successor(chunk.group);
  if (successor >= 0) send(stage, successor, {chunk.group, mb, false}, record.output, "activation");
  if (s_.parallel.redundant_computation) emit_redundant_forward(stage, mb, record.output);
  if (successor >= 0) record.output = {};
}

PerPeer<OpId> TrainingGraphBuilder::forward_body(int stage, const Chunk& chunk, PerPeer<TensorId> x,
                                                 std::span<const PerPeer<TensorId>> also_read, int mb,
                                                 ForwardRecord& record) {
  const bool per_op = s_.per_op_checkpointing();
  const bool selective = s_.recomputes_attention_core();
  record.saved.assign(chunk.steps.size(), {});
  record.checkpoint.assign(chunk.steps.size(), {});
  PerPeer<OpId> first_op;
  ShardedLayers sharded(*this, stage, chunk, false, mb);
  // What every step's ops make: its output, what it keeps for the backward pass, a layer's
  // checkpoint. `ops` are those whose end is the step's end.
  auto record_step = [&](std::size_t i, const PerPeer<OpId>& ops, PerPeer<TensorId> out) {
    const Step& step = chunk.steps[i];
    if (first_op.empty()) {
      for (const PerPeer<TensorId>& other : also_read) consume(ops, other);
    }
    sharded.note(i, ops, false);
    produce(ops, out);
    const bool recomputed = recomputes_layer(chunk, i);
    const bool keeps_saved = !recomputed;
    const Bytes saved = step.saved_bytes - (selective ? step.recomputable_bytes : 0);
    const bool layer_start = recomputed && (i == 0 || recompute_group(chunk, i - 1) != recompute_group(chunk, i)) &&
                             chunk.block_has_backward[i];
    // A layer's checkpoint: the input of its first step; under per-op checkpointing also what it
    // keeps of each step's output, in that step's slot.
    const Bytes checkpoint = (layer_start ? input_bytes(chunk, i) : 0) +
                             (per_op && recomputed && chunk.block_has_backward[i] ? step.op_checkpoint_bytes : 0);
    if (redundant_saved_ != nullptr) {
      // A redundant forward keeps the same, in one tensor (emit_redundant_forward).
      *redundant_saved_ += (keeps_saved && saved > 0 ? saved : 0) + checkpoint;
    } else {
      if (keeps_saved && saved > 0) {
        record.saved[i] = add_tensors(stage, saved, TensorKind::activation);
        produce(ops, record.saved[i]);
      }
      if (checkpoint > 0) {
        record.checkpoint[i] = add_tensors(stage, checkpoint, TensorKind::activation);
        produce(ops, record.checkpoint[i]);
      }
    }
    if (first_op.empty()) first_op = ops;
    x = std::move(out);
  };
  const std::string_view phase = redundant_saved_ != nullptr ? "redundant fwd" : "fwd";
  for (std::size_t i = 0; i < chunk.steps.size(); ++i) {
    const Step& step = chunk.steps[i];
    if (!step.forward) continue;
    begin_layer(chunk, i);
    sharded.enter(i);
    PerPeer<TensorId> out = add_tensors(stage, step.output_bytes, TensorKind::activation);
    if (const TpOverlapPair overlap = tp_overlap_at(chunk, i); overlap != TpOverlapPair::none) {
      // Steps i and i + 1 together: the collective pipelined with the GEMM beside it.
      PerPeer<TensorId> next_out = add_tensors(stage, chunk.steps[i + 1].output_bytes, TensorKind::activation);
      std::pair<PerPeer<OpId>, PerPeer<OpId>> ends =
          emit_tp_overlap(overlap, stage, step, chunk.steps[i + 1], mb, x, out);
      record_step(i, ends.first, std::move(out));
      sharded.enter(i + 1);
      record_step(i + 1, ends.second, std::move(next_out));
      ++i;
      continue;
    }
    PerPeer<OpId> ops;
    if (step.context_parallel_chunks > 1) {
      ops = emit_ring_attention(stage, step, step.forward.value(), phase, mb, x, 1);
    } else {
      ops = add_ops(stage, op_name(step, phase, mb), step_work(*step.forward, step.comm, stage), step.comm);
      consume(ops, x);
      add_workspace(stage, ops, step.forward_workspace_bytes);
    }
    record_step(i, ops, std::move(out));
  }
  sharded.finish();
  record.output = std::move(x);
  return first_op;
}

PerPeer<OpId> TrainingGraphBuilder::emit_ring_attention(int stage, const Step& step, const OpWork& whole,
                                                        std::string_view phase, int mb, const PerPeer<TensorId>& input,
                                                        int traffic_factor) {
  const int parts = step.context_parallel_chunks;
  const WorkId part_work = b_->intern_work(ring_attention_part(whole, parts));
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
      const NameId send_name = b_->intern_name(name("{} kv send{} {}/{}", step.name, mb_suffix(mb), j + 1, parts - 1));
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

void TrainingGraphBuilder::emit_backward(int stage, Chunk& chunk, const PipelineAction& action, ForwardRecord& record,
                                         std::vector<PendingWeightGrad>& pending) {
  if (!chunk.has_backward && !chunk.sends_gradient) return;
  const int mb = action.microbatch;
  const PerPeer<TensorId> dy =
      graph_.successor(chunk.group) >= 0 ? boundary_tensor({chunk.group, mb, true}, stage) : record.output;
  PerPeer<TensorId> dx;
  if (!chunk.has_backward) {
    dx = dy;  // nothing to compute here: relay the gradient to the trainable chunks before
  } else if (composites_) {
    dx = emit_backward_passes(stage, chunk, mb, dy, record, pending);
  } else {
    std::vector<PerPeer<TensorId>> recomputed(chunk.steps.size());
    // Its own pass: it reads only its checkpoint, so unlike the rest of the backward it need
    // not wait for the incoming gradient.
    if (recomputes_before_gradient(chunk)) {
      ShardedLayers sharded(*this, stage, chunk, true, mb, false);
      sharded.enter(chunk.steps.size() - 1);
      recompute_layer(stage, chunk, chunk.steps.size() - 1, mb, record, recomputed);
      sharded.finish();
    }
    const GradientWindowScope window(*this, stage, mb, "bwd");
    dx = backward_body(stage, chunk, dy, record, std::move(recomputed), mb, pending);
  }
  for (int input : chunk.gradient_inputs) send(stage, input, {input, mb, true}, dx, "gradient");
}

PerPeer<TensorId> TrainingGraphBuilder::emit_backward_passes(int stage, const Chunk& chunk, int mb,
                                                             const PerPeer<TensorId>& dy, ForwardRecord& record,
                                                             std::vector<PendingWeightGrad>& pending) {
  const bool input_gradients =
      std::any_of(chunk.steps.begin(), chunk.steps.end(), [](const Step& step) { return step.backward.has_value(); });
  if (split_weight_grads_ && !input_gradients) {
    // Nothing upstream trains (frozen_rule.hpp), so the backward pass has no op: only weight
    // gradients wait for their pass, reading the incoming gradient and what the forward saved.
    // No layer here recomputes: a layer with weight gradients has input-gradient ops too (its
    // first parameter step lies upstream of the rest), so only non-layer blocks come this way.
    const ForwardRecord saved = forward_handles(chunk);
    for (std::size_t k = chunk.steps.size(); k-- > 0;) {
      if (chunk.steps[k].weight_grad) pending.push_back({k, dy, saved.saved[k]});
    }
    record.output_grad = dy;
    return dy;
  }
  PassValues escapes;
  if (recomputes_before_gradient(chunk)) {
    emit_pass(stage, chunk, "recompute", mb, {}, escapes, record.bundles, [&](std::vector<PassBundle>& leaving) {
      std::vector<PerPeer<TensorId>> inner(chunk.steps.size());
      ShardedLayers sharded(*this, stage, chunk, true, -1, false);
      sharded.enter(chunk.steps.size() - 1);
      recompute_layer(stage, chunk, chunk.steps.size() - 1, -1, forward_handles(chunk), inner);
      sharded.finish();
      for (std::size_t k = 0; k < inner.size(); ++k) {
        leave(leaving, route_of_saved(chunk, k, Route::recompute_to_backward), member_key(Kept::recomputed, k),
              inner[k]);
      }
      return PassValues{};
    });
  }
  const GradientWindowScope window(*this, stage, mb, "bwd");
  emit_pass(stage, chunk, "bwd", mb, PassValues{dy}, escapes, record.bundles, [&](std::vector<PassBundle>& leaving) {
    std::vector<PendingWeightGrad> inner_pending;
    PerPeer<TensorId> dx = backward_body(stage, chunk, dy, forward_handles(chunk),
                                         member_handles(chunk, "recompute", Kept::recomputed), -1, inner_pending);
    // The first chunk's input gradient goes nowhere (and may be a weight gradient's input).
    PassValues values{chunk.sends_gradient ? dx : PerPeer<TensorId>{}};
    // What the weight pass reads: output gradients made here, and inputs saved by the forward
    // or the recompute pass (handles already) or recomputed here.
    // (The same for every template of the shape: one recorded again, beside collectives say,
    // replaces them.)
    std::vector<PendingWeightGrad>& handles = weight_pass_inputs_[chunk.shape];
    handles.clear();
    for (const PendingWeightGrad& weight : inner_pending) {
      PendingWeightGrad& handle = handles.emplace_back(PendingWeightGrad{weight.step, {}, weight.input});
      // The incoming gradient itself (left empty here) is the weight pass's own input, and so
      // is the outgoing one (an escaping value cannot be a bundle member too).
      if (chunk.sends_gradient && weight.output_grad == dx) {
        handle.reads_sent_gradient = true;
      } else if (PassRecorder::is_tagged(weight.output_grad.front())) {
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
    if (weight.reads_sent_gradient) {
      weight.output_grad = record.sent_gradient = escapes[0];
    } else if (weight.output_grad.empty()) {
      weight.output_grad = record.output_grad = dy;
    }
  }
  return escapes[0];
}

int TrainingGraphBuilder::recompute_group(const Chunk& chunk, std::size_t step) const {
  const int block = chunk.block[step];
  const LayerRecompute& pick = s_.parallel.recompute_layers;
  if (block < 0 || pick.method != LayerRecompute::Method::uniform) return block;
  // Megatron-LM counts the groups from the chunk's first layer.
  const auto first = std::find_if(chunk.block.begin(), chunk.block.end(), [](int b) { return b >= 0; });
  return (block - *first) / pick.count;
}

bool TrainingGraphBuilder::recomputes_before_gradient(const Chunk& chunk) const {
  const std::size_t last = chunk.steps.size() - 1;
  return recomputes_layer(chunk, last) && chunk.block_has_backward[last];
}

PerPeer<TensorId> TrainingGraphBuilder::backward_body(int stage, const Chunk& chunk, PerPeer<TensorId> dy,
                                                      const ForwardRecord& record,
                                                      std::vector<PerPeer<TensorId>> recomputed, int mb,
                                                      std::vector<PendingWeightGrad>& pending) {
  const bool selective = s_.recomputes_attention_core();
  ShardedLayers sharded(*this, stage, chunk, true, mb);
  for (std::size_t k = chunk.steps.size(); k-- > 0;) {
    const Step& step = chunk.steps[k];
    begin_layer(chunk, k);
    sharded.enter(k);
    enter_gradient_step(chunk, k);
    const bool layer_end = k + 1 < chunk.steps.size() && recompute_group(chunk, k + 1) != recompute_group(chunk, k);
    if (recomputes_layer(chunk, k) && layer_end && chunk.block_has_backward[k]) {
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
    PerPeer<TensorId> dx = dy;
    if (step.backward) {
      PerPeer<OpId> ops;
      dx = add_tensors(stage, input_bytes(chunk, k), TensorKind::activation);
      if (step.context_parallel_chunks > 1) {
        ops = emit_ring_attention(stage, step, *step.backward, "bwd", mb, dy, 2);
      } else {
        ops = add_ops(stage, op_name(step, "bwd", mb), step_work(*step.backward, step.comm, stage), step.comm,
                      backward_lane(step));
        consume(ops, dy);
        add_workspace(stage, ops, step.backward_workspace_bytes);
      }
      if (!step.weight_grad) consume(ops, saved);
      consume(ops, rematerialized);
      produce(ops, dx);
      record_grad_op(chunk, k, ops);
      sharded.note(k, ops, step.parameters > 0 && !step.weight_grad);
    }
    if (step.weight_grad) {
      PendingWeightGrad weight{k, dy, saved};
      if (split_weight_grads_) {
        pending.push_back(std::move(weight));
      } else {
        sharded.note(k, emit_weight_grad(stage, chunk, weight, mb), true);
      }
    }
    dy = std::move(dx);
  }
  sharded.finish();
  return dy;
}

void TrainingGraphBuilder::recompute_layer(int stage, const Chunk& chunk, std::size_t last, int mb,
                                           const ForwardRecord& record, std::vector<PerPeer<TensorId>>& recomputed) {
  begin_layer(chunk, last);
  std::size_t first = last;
  while (first > 0 && recompute_group(chunk, first - 1) == recompute_group(chunk, last)) --first;
  // Under per-op checkpointing a step whose whole output was kept does not run again (the
  // layer's first step always does: it reads the checkpointed input).
  const bool per_op = s_.per_op_checkpointing();
  auto runs = [&](std::size_t i) { return !per_op || i == first || chunk.steps[i].op_recompute_share > 0.0; };
  auto next_runs = [&](std::size_t i) {
    for (std::size_t j = i + 1; j <= last; ++j) {
      if (chunk.steps[j].forward) return runs(j);
    }
    return true;
  };
  PerPeer<TensorId> x = record.checkpoint[first];
  PerPeer<OpId> previous;
  for (std::size_t i = first; i <= last; ++i) {
    const Step& step = chunk.steps[i];
    if (!step.forward) continue;
    if (!runs(i)) {
      // Its kept output feeds the next step that runs; what its backward reads (its input) comes
      // with the op before it, which made that input.
      if (step.saved_bytes > 0) {
        recomputed[i] = add_tensors(stage, step.saved_bytes, TensorKind::activation);
        produce(previous, recomputed[i]);
      }
      consume(previous, x);  // an earlier step's kept output that no op read
      x = record.checkpoint[i];
      continue;
    }
    const OpWork& work = per_op && step.op_recompute ? *step.op_recompute : *step.forward;
    const PerPeer<OpId> ops =
        add_ops(stage, op_name(step, "recompute", mb), step_work(work, step.comm, stage), step.comm);
    consume(ops, x);
    if (i != first) consume(ops, record.checkpoint[i]);  // the part of its output that was kept
    consume(ops, layer_parameters_);
    add_workspace(stage, ops, step.forward_workspace_bytes);  // a recomputed op needs its scratch again
    if (step.saved_bytes > 0) {
      recomputed[i] = add_tensors(stage, step.saved_bytes, TensorKind::activation);
      produce(ops, recomputed[i]);
    }
    // The layer's own output is not needed again: the backward starts from the incoming gradient.
    x = {};
    if (i < last && next_runs(i)) {
      x = add_tensors(stage, step.output_bytes, TensorKind::activation);
      produce(ops, x);
    }
    previous = ops;
  }
  consume(previous, x);
}

Lane TrainingGraphBuilder::backward_lane(const Step& step) {
  const bool tensor_parallel = step.comm == CommGroupKind::tp && step.backward &&
                               category_of(step.backward->op_class) == OpCategory::communication;
  return tensor_parallel ? Lane::tensor_parallel : Lane::compute;
}

PerPeer<OpId> TrainingGraphBuilder::emit_weight_grad(int stage, const Chunk& chunk, const PendingWeightGrad& weight,
                                                     int mb, const PerPeer<OpId>& join) {
  const Step& step = chunk.steps[weight.step];
  PerPeer<TensorId> input = weight.input;
  if (step.regather) {
    // Issued with the backward of the step: it waits for the step's output gradient too.
    const PerPeer<OpId> gather = add_ops(stage, op_name(step, "regather", mb),
                                         step_work(*step.regather, step.comm, stage), step.comm, Lane::tensor_parallel);
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
  return ops;
}

void TrainingGraphBuilder::emit_weight_pass(int stage, const Chunk& chunk, const PipelineAction& action,
                                            ForwardRecord& record, std::vector<PendingWeightGrad>& pending) {
  if (pending.empty()) return;
  const GradientWindowScope window(*this, stage, action.microbatch, "weight");
  if (composites_) {
    // It reads bundles (what the forward, recompute and backward passes left for it) and maybe
    // the backward's incoming and outgoing gradients.
    PassValues escapes;
    emit_pass(stage, chunk, "weight", action.microbatch, {record.output_grad, record.sent_gradient}, escapes,
              record.bundles, [&](std::vector<PassBundle>&) {
                weight_pass_body(stage, chunk, pending, -1);
                return PassValues{};
              });
  } else {
    weight_pass_body(stage, chunk, pending, action.microbatch);
  }
  pending.clear();
}

void TrainingGraphBuilder::weight_pass_body(int stage, const Chunk& chunk,
                                            const std::vector<PendingWeightGrad>& pending, int mb) {
  if (recorder_ != nullptr) recorder_->begin_group(kNoGroup);
  OpWork join_work;
  join_work.op_class = OpClass::barrier;
  const PerPeer<OpId> join =
      add_ops(stage, name("weight pass inputs{}", mb_suffix(mb)), b_->intern_work(join_work), std::nullopt);
  for (const PendingWeightGrad& weight : pending) {
    consume(join, weight.output_grad);
    consume(join, weight.input);
  }
  for (const PendingWeightGrad& weight : pending) {
    begin_layer(chunk, weight.step);
    enter_gradient_step(chunk, weight.step);
    emit_weight_grad(stage, chunk, weight, mb, join);
  }
}

void TrainingGraphBuilder::record_grad_op(const Chunk& chunk, std::size_t step, const PerPeer<OpId>& ops) {
  if (chunk.steps[step].parameters == 0 || !chunk.steps[step].trainable) return;
  if (recorder_ != nullptr) {
    for (std::size_t i = 0; i < ops.size(); ++i) recorder_->add_signal(step, i, ops[i]);
    return;
  }
  PerPeer<Gate>& gates = last_grad_gates(chunk)[step];
  gates.clear();
  for (OpId op : ops) gates.push_back({op, -1});
}

std::vector<PerPeer<Gate>>& TrainingGraphBuilder::last_grad_gates(const Chunk& chunk) {
  auto& last = last_grad_op_[chunk_index(chunk)];
  if (last.size() < chunk.steps.size()) last.resize(chunk.steps.size());
  return last;
}

}  // namespace weft::training_graph
