#include "simulator/workload/graph_size.hpp"

#include <algorithm>
#include <numeric>
#include <string>

#include <fmt/format.h>

#include "simulator/core/checked_math.hpp"
#include "simulator/core/format_units.hpp"
#include "simulator/workload/multimodal_model.hpp"
#include "simulator/workload/pipeline_schedule.hpp"

namespace weft {
namespace {

// Outer ops of one microbatch's chunk with passes as composites: its forward, backward, weight and
// recompute passes, and the activation and gradient transfers at its ends.
constexpr std::int64_t kComposedOpsPerChunk = 6;
// The most kernels an optimizer step runs (simulator/workload/optimizer_step.cpp).
constexpr std::int64_t kOptimizerStepOps = 6;

// Ops of one step for one microbatch, as the builder emits them (training_passes.cpp): a ring
// attention step computes `chunks` parts with a transfer between each two. With TP communication
// overlapped (`overlap_tp`: the TP size, else 0), a forward all-gather and the GEMM after it take
// TP GEMM parts and TP - 1 transfers instead of two ops, a GEMM and the reduce-scatter after it
// twice the pipeline's parts (training_tp_overlap.cpp); counted on the collective's step.
std::int64_t step_ops(const Step& step, bool split_weight_grads, bool full_recompute, std::int64_t overlap_tp) {
  const std::int64_t once = step.context_parallel_chunks > 1 ? 2 * std::int64_t{step.context_parallel_chunks} - 1 : 1;
  std::int64_t ops = 0;
  if (step.forward) ops += full_recompute ? 2 * once : once;
  if (overlap_tp > 0 && step.forward && step.comm == CommGroupKind::tp) {
    if (step.forward->op_class == OpClass::allgather) ops += 2 * overlap_tp - 3;
    if (step.forward->op_class == OpClass::reducescatter) ops += 2 * kTpOverlapPipelineParts - 2;
  }
  if (step.backward) ops += once;
  if (step.weight_grad) ops += split_weight_grads ? 2 : 1;  // a pending weight gradient waits in its own pass
  if (step.regather) ops += 1;
  return ops;
}

// Ops of one microbatch on each pipeline position, summed over its chunks (virtual stages); the
// layers' steps from `known` where given and every chunk has layers.
std::vector<std::int64_t> ops_per_position(const TrainingScenario& s, const PipelineLayerSteps* known) {
  const ParallelPlan& p = s.parallel;
  const MultimodalModel model(s.model, p.cp_algorithm);
  const ShardContext context = s.shard_context();
  const std::vector<int> layers = s.layers_per_virtual_stage();
  const bool split = splits_weight_gradients(p.schedule);
  const bool full_recompute = s.recomputes_layers();  // per-op checkpointing: at most as many ops
  const std::int64_t overlap_tp = s.overlaps_tp_communication() ? p.tp : 0;
  std::vector<Step> steps;
  std::vector<int> blocks;
  if (known != nullptr && std::find(layers.begin(), layers.end(), 0) != layers.end()) known = nullptr;
  auto count = [&](const MultimodalModel::Layers& range) {
    std::int64_t ops = 0;
    if (known != nullptr) {
      for (int layer = range.first; layer < range.end; ++layer) {
        for (const Step& step : known->steps[static_cast<std::size_t>(layer)])
          ops += step_ops(step, split, full_recompute, overlap_tp);
      }
      return ops;
    }
    steps.clear();
    blocks.clear();
    model.append_steps(context, s.training.sample(), range, false, steps, blocks);
    for (const Step& step : steps) ops += step_ops(step, split, full_recompute, overlap_tp);
    return ops;
  };
  // A model of one module repeats one layer: a chunk is its first layer with the blocks anchored to
  // it, and as many more as it has of a layer in the middle (a sweep estimates thousands of plans).
  const int total_layers = model.layer_count();
  const bool uniform = !s.model.multimodal() && total_layers >= 3;
  const std::int64_t middle_layer = uniform ? count({1, 2, false, false}) : 0;
  std::vector<std::int64_t> ops(static_cast<std::size_t>(p.pp), 0);
  int first = 0;
  for (std::size_t group = 0; group < layers.size(); ++group) {
    const bool first_stage = group == 0;
    const bool last_stage = group + 1 == layers.size();
    std::int64_t& position = ops[group % ops.size()];
    position += kComposedOpsPerChunk - 4;  // the transfers
    if (!uniform) {
      position += count({first, first + layers[group], first_stage, last_stage});
    } else {
      // A chunk's first layer is a middle one unless the input or output block is anchored to it.
      const bool anchored = first_stage || last_stage;
      position += (anchored ? count({first, first + 1, first_stage, last_stage}) : middle_layer) +
                  (layers[group] - 1) * middle_layer;
    }
    // ZeRO-3: each layer, and the input and output blocks, gathered twice and reduce-scattered,
    // the shard then all-reduced under hybrid sharding (training_sharded_layers.cpp); under full
    // recompute one more gather for the recompute pass.
    if (p.zero >= 3 && p.zero_shards() > 1) {
      const int ops_per_unit = p.hybrid_sharding() ? 4 : 3;
      position += ops_per_unit * (layers[group] + first_stage + last_stage) + (full_recompute ? 1 : 0);
    }
    first += layers[group];
  }
  return ops;
}

}  // namespace

GraphSize estimate_training_graph(const TrainingScenario& s, const WorkloadOptions& options,
                                  const PipelineLayerSteps* layer_steps) {
  const ParallelPlan& p = s.parallel;
  // With per-sample data every DP replica of each position's mesh is simulated; unfolded, every
  // rank.
  const std::int64_t peers_per_stage = options.unfold ? std::int64_t{p.dp} * p.cp * p.tp : 1;
  GraphSize size;
  size.microbatches = s.microbatches();
  const std::int64_t chunks = std::int64_t{p.pp} * p.vpp;
  std::int64_t per_rank_ops = 0;
  int position = 0;
  for (const std::int64_t ops : ops_per_position(s, layer_steps)) {
    const std::int64_t replicas = s.data ? p.mesh_at(position++).dp : 1;
    const std::int64_t ranks_per_position = replicas * peers_per_stage;
    size.simulated_ranks = saturating_add(size.simulated_ranks, ranks_per_position);
    size.ops_per_microbatch = std::max(size.ops_per_microbatch, ops);
    size.ops = saturating_add(size.ops, saturating_mul(ranks_per_position, saturating_mul(size.microbatches, ops)));
    per_rank_ops += ops;
  }
  // Each rank's gradient reductions and parameter gathers (at most one op per step) and the
  // kernels of its optimizer step.
  per_rank_ops += kOptimizerStepOps;
  size.ops = saturating_add(size.ops, saturating_mul(size.simulated_ranks, per_rank_ops));
  if (options.composites) {
    // Templates hold at most one microbatch's ops of each position.
    const std::int64_t composed = saturating_mul(kComposedOpsPerChunk, saturating_mul(size.microbatches, chunks));
    size.held_ops = saturating_add(saturating_mul(size.simulated_ranks, composed), per_rank_ops);
    size.held_ops = std::min(size.held_ops, size.ops);
  } else {
    size.held_ops = size.ops;
  }
  size.bytes = saturating_mul(size.held_ops, kGraphBytesPerOp);
  return size;
}

void check_training_graph_size(const TrainingScenario& s, const WorkloadOptions& options) {
  const std::int64_t limit = graph_op_limit(options.max_ops);
  const GraphSize size = estimate_training_graph(s, options);
  if (size.held_ops <= limit) return;
  // Name the factor that makes the size: many microbatches, many ranks, or a long model.
  std::string cause;
  if (size.microbatches >= size.simulated_ranks && size.microbatches >= size.ops_per_microbatch) {
    cause = fmt::format("training.global_batch: {} samples make {} microbatches on each of {} simulated ranks",
                        format_count(s.training.global_batch), format_count(size.microbatches),
                        format_count(size.simulated_ranks));
  } else if (size.simulated_ranks >= size.ops_per_microbatch) {
    cause = fmt::format("{}: {} simulated ranks of {} microbatches", options.unfold ? "--unfold" : "parallel.dp",
                        format_count(size.simulated_ranks), format_count(size.microbatches));
  } else {
    cause = fmt::format("model: its {} layers make {} ops per microbatch on a rank, {} microbatches on {} ranks",
                        s.model.layers(), format_count(size.ops_per_microbatch), format_count(size.microbatches),
                        format_count(size.simulated_ranks));
  }
  const std::string held =
      size.held_ops == size.ops ? "" : fmt::format(" ({} held in memory)", format_count(size.held_ops));
  throw InputError(fmt::format("{}, about {} ops{} and {:.1f} GB; the limit is {} ops ({})", cause,
                               format_count(size.ops), held, static_cast<double>(size.bytes) / kBytesPerGB,
                               format_count(limit), graph_op_limit_source(options.max_ops)));
}

}  // namespace weft
