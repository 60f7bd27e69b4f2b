// Compute slowed by the data-parallel collectives it overlaps (collective_contention.hpp): the
// windows where the graph runs them beside compute, and the SMs they hold averaged over each.
//   - ZeRO-3 (training_sharded_layers.cpp): each layer's compute beside the next layer's
//     parameter gather and, in the backward pass, the previous layer's gradient reduce-scatter;
//   - below ZeRO-3, with the gradient reduction overlapped: the passes of the last microbatch
//     that make gradients, beside the stage's whole reduction (its buckets are issued as they
//     fill, during those passes);
//   - ZeRO-1 and 2 with the parameter gather overlapped: the first microbatch's forward passes,
//     beside the stage's whole gather.
// Pipeline and context-parallel transfers and TP collectives are not counted here (docs/collectives.md).
#include "simulator/workload/collective_contention.hpp"
#include "simulator/workload/modules/op_factory.hpp"
#include "simulator/workload/training_graph_builder.hpp"

namespace weft::training_graph {

DeviceSpec TrainingGraphBuilder::stage_gpu(int stage) const {
  // At full speed: a straggler's window keeps the share of its healthy peers', so that a folded
  // rank (at its slowest GPU's pace) and the ranks it stands for are slowed alike.
  return s_.cluster.gpu_of_group(stages_[static_cast<std::size_t>(stage)].front().pace.node_group);
}

TimeNs TrainingGraphBuilder::collective_time(int stage, const OpWork& work, CommGroupKind kind) {
  OpWork placed = work;
  placed.comm_group = stage_group(kind, stage);
  return cost_->duration(placed, stage_gpu(stage));
}

TimeNs TrainingGraphBuilder::steps_compute_time(int stage, const Chunk& chunk, std::size_t first, std::size_t last,
                                                bool backward) const {
  const DeviceSpec gpu = stage_gpu(stage);
  TimeNs total = 0;
  auto add = [&](const std::optional<OpWork>& work) {
    if (work && category_of(work->op_class) == OpCategory::compute) total += cost_->duration(*work, gpu);
  };
  for (std::size_t k = first; k <= last && k < chunk.steps.size(); ++k) {
    const Step& step = chunk.steps[k];
    if (!backward) {
      add(step.forward);
      continue;
    }
    add(step.backward);
    add(step.weight_grad);
    const bool recomputed =
        s_.parallel.recompute == RecomputePolicy::full
            ? is_layer(chunk, k)
            : s_.parallel.recompute == RecomputePolicy::selective && step.attention_core && step.recomputable_bytes > 0;
    if (recomputed) add(step.forward);
  }
  return total;
}

double TrainingGraphBuilder::collective_share(int stage, TimeNs compute, TimeNs collective) {
  if (!s_.options.collective_contention) return 0.0;
  const DeviceSpec gpu = stage_gpu(stage);
  const bool across_nodes = cost_->group(stage_group(CommGroupKind::dp, stage)).nodes > 1;
  const int held =
      across_nodes && gpu.collective_sms_across_nodes > 0 ? gpu.collective_sms_across_nodes : gpu.collective_sms;
  return averaged_collective_sms(compute, collective, gpu.streaming_multiprocessors, held);
}

double TrainingGraphBuilder::data_parallel_window(int stage, int mb, bool backward) {
  const bool window =
      backward ? mb == s_.microbatches() - 1 && s_.options.overlap_grad_reduce
               : mb == 0 && s_.options.overlap_param_gather && (s_.parallel.zero == 1 || s_.parallel.zero == 2);
  if (!window || dims_.dp * dims_.cp == 1 || s_.parallel.zero >= 3) return 0.0;
  auto [cached, made] = window_shares_.try_emplace({stage, backward}, 0.0);
  if (!made) return cached->second;
  TimeNs collectives = 0;
  for (const Bucket& bucket : buckets(stage)) {
    const Bytes bytes = backward ? s_.stack.gradient_bytes(s_.training.dtype) * bucket.parameters
                                 : bytes_per_element(s_.training.dtype) * bucket.parameters;
    const OpClass op_class = !backward               ? OpClass::allgather
                             : s_.parallel.zero >= 1 ? OpClass::reducescatter
                                                     : OpClass::allreduce;
    collectives += collective_time(stage, communication_work(op_class, bytes), CommGroupKind::dp);
  }
  TimeNs compute = 0;
  for (const Chunk& chunk : chunks_of(stage, sample_of(stage, mb))) {
    if (!chunk.steps.empty()) compute += steps_compute_time(stage, chunk, 0, chunk.steps.size() - 1, backward);
  }
  cached->second = collective_share(stage, compute, collectives);
  return cached->second;
}

WorkId TrainingGraphBuilder::beside_collectives(WorkId work_id) {
  OpWork work = b_->work(work_id);
  work.reserved_sms += collective_sms_share_;
  return b_->intern_work(work);
}

}  // namespace weft::training_graph
