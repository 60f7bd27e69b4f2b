#pragma once

// A lower bound of a plan's simulated iteration time, cheap enough to take for every plan of a
// sweep: a plan whose bound is slower than the k-th best simulated plan cannot enter the top k and
// need not be simulated (docs/sweep.md, pruning).

#include <cstdint>
#include <map>
#include <optional>
#include <tuple>
#include <vector>

#include "cost_models/cluster_cost_model.hpp"
#include "simulator/workload/training_scenario.hpp"

namespace weft {

// What a pipeline layer (with the blocks anchored to it) puts on its rank's compute stream for one
// microbatch, in ns: compute ops, and the forward pass's tensor-parallel collectives where they run
// there (synchronously, without TP communication overlap), each with the device's kernel gap after
// it (the next op on the stream starts no earlier).
struct LayerComputeTimes {
  TimeNs forward = 0;
  TimeNs input_grad = 0;           // the backward pass's input-gradient ops
  TimeNs weight_grad = 0;          // its weight-gradient ops
  TimeNs full_recompute = 0;       // the layer's forward again (its own steps, not the anchored blocks)
  TimeNs selective_recompute = 0;  // its attention core's forward again
  TimeNs op_recompute = 0;         // what per-op checkpointing runs again (Step::op_recompute_share)
};

// Lower bounds of the iteration times `simulate` gives the plans of one sweep: one model, cluster
// and options; plans that vary the layout, micro-batch, recompute and schedule. A pipeline rank
// runs what its compute stream holds one op at a time, and its first op waits for the first
// microbatch's forward through the stages before it. So an iteration takes at least, for every
// stage s, with m microbatches, F, B, W and R a chunk's forward, input-gradient, weight-gradient
// and recomputed ops for one microbatch, head(s) the forward of the virtual stages virtual stage s
// reads, transitively (0 .. s-1 of a chain; under modality parallelism the longest way from the
// data through the stage tree), and drain(s) the last input gradient's way back through them (the
// longest: their input-gradient ops and the recomputation their backward passes run):
//
//   head(s) + m x sum over its chunks of (F + B + W + R)
//   head(s) + m x sum over its chunks of (F + B + R) + drain(s)      (every op but W precedes the
//                                                                     stage's last input gradient)
//   head(s) + m x sum of (F + B + W + R) - W(first layer) + drain(s) (schedules whose backward
//                                                                     pass computes W: only its first
//                                                                     layer's W follows)
//
// Other communication, the optimizer step and every op the bound is not sure of count nothing;
// where the graph builder may split an op (ring attention, TP communication overlap), the cheaper
// of the whole op and its parts counts. Each term is a chain of ops on one compute stream, whose
// n ops hold it for their times and n - 1 kernel gaps. Not thread-safe: layer times are cached per
// shard context.
class IterationBound {
 public:
  // Prices ops on `base`'s cluster (its calibration included) with its options (ideal network,
  // collective algorithm), as the plans' simulations do.
  explicit IterationBound(const TrainingScenario& base);

  // None for plans it does not cover: per-sample data, virtual stages without layers.
  std::optional<TimeNs> operator()(const TrainingScenario& plan);

  // Per pipeline layer, for the plan's shard context.
  const std::vector<LayerComputeTimes>& layer_times(const TrainingScenario& plan);

 private:
  // What a layer's times depend on besides the model: the plan's shard context (its kernels
  // included), the vocabulary multiple, the CP algorithm, TP communication overlap, and whether TP
  // divides a node.
  using ContextKey = std::tuple<ShardContext, std::int64_t, ContextParallelAlgorithm, bool, bool>;

  // A chain of ops on one compute stream, from what its ops hold the stream for (each with the gap
  // after it): the gap after its last op does not delay its end.
  TimeNs chain(TimeNs held) const;

  ClusterCostModel cost_;
  TimeNs kernel_gap_ = 0;  // the GPU's gap between kernels queued back to back (0: none, or turned off)
  std::map<int, std::uint32_t> tp_groups_;  // per TP size: a TP group's placement (ranks 0 .. tp - 1)
  std::map<ContextKey, std::vector<LayerComputeTimes>> cache_;
};

}  // namespace weft
