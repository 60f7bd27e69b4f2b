#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <utility>
#include <vector>

#include "cost_models/cluster_cost_model.hpp"
#include "simulator/workload/multimodal_model.hpp"

namespace weft::dip {

// How a layer keeps what its backward pass reads: everything, everything but the attention core
// (selective recompute), or only its input (full recompute).
enum class LayerPolicy : std::uint8_t { keep, selective, full };
inline constexpr EnumNames<LayerPolicy, 3> kLayerPolicyNames({"keep", "selective", "full"});

// What one pipeline layer, with the blocks anchored to it (multimodal_model.hpp), costs one
// (sub-)microbatch on one rank under the frozen rule: SEMU's per-layer estimates that PipeWeaver's
// partitioner and searcher work from (papers/001 §5, §6.3).
struct LayerCost {
  TimeNs forward = 0;             // forward ops, tensor-parallel collectives included
  TimeNs recompute_forward = 0;   // the forward as full recompute reruns it: TP collectives never overlapped
  TimeNs backward = 0;            // input and weight gradients, with their collectives
  TimeNs attention_forward = 0;   // the attention core's forward, which selective recompute reruns
  TimeNs attention_backward = 0;  // the attention core's backward
  Bytes saved = 0;                // kept from the forward to the backward pass
  Bytes selective_saved = 0;      // kept under selective recompute
  Bytes input = 0;                // kept under full recompute: the layer's input
  double training_flops = 0.0;    // model FLOPs of its forward and backward (Megatron convention)
  double attention_flops = 0.0;   // of them, the attention core's
  std::int64_t parameters = 0;    // held on the rank
  std::int64_t trained = 0;       // of them, trainable

  // Time of the forward and backward passes, and bytes held between them, under `policy`.
  TimeNs latency(LayerPolicy policy) const;
  Bytes memory(LayerPolicy policy) const;
};

// Per-layer costs of a multimodal model, computed once per (layer, microbatch shape) and cached.
// Not thread-safe: the planner builds its stage flows on one thread.
class LayerCosts {
 public:
  // Ops are priced on `cluster` (its calibration included); tensor-parallel collectives are placed
  // on its first `base.tp` ranks, and take no time with an ideal network. `data_parallel` places
  // the pipeline ranks (Megatron's order: pipeline rank p starts at p x tp x cp x dp).
  LayerCosts(const MultimodalModel& model, const ShardContext& base, const ClusterSpec& cluster, bool ideal_network,
             int data_parallel = 1);

  // Forward TP collectives overlapped with the GEMMs beside them, as the stack's tp_comm_overlap
  // runs them under sequence parallelism (TrainingScenario::overlaps_tp_communication and
  // training_tp_overlap.cpp; not in recomputed forwards). Forgets what was priced before.
  void set_tp_overlap(bool overlap);

  const LayerCost& at(int layer, const SampleShape& shape);
  // The cost of `layer` in a stage of `stage_shape` (a sub-microbatch's or a whole microbatch's):
  // at() of the layer's share of it (layer_shape).
  const LayerCost& in_stage(int layer, const SampleShape& stage_shape) {
    return at(layer, layer_shape(layer, stage_shape));
  }
  // What `layer` sees of a stage of `stage_shape`: only what sets its module's tokens.
  SampleShape layer_shape(int layer, const SampleShape& stage_shape) const;
  // The steps of `layer` (with the blocks anchored to it) for one sub-microbatch of `shape`.
  std::vector<Step> steps(int layer, const SampleShape& shape) const;
  const MultimodalModel& model() const { return model_; }
  // The module a pipeline layer belongs to.
  std::size_t module_of(int layer) const;
  // How long `bytes` take from pipeline rank `from` to pipeline rank `to` (a send between the
  // first ranks of the two stages, as the simulator's builder prices it).
  TimeNs transfer_time(int from, int to, Bytes bytes);
  // How long an all-reduce of `bytes` takes over the data-parallel group of pipeline rank `stage`
  // (its ranks stage x tp x cp x dp + j x tp x cp, j < dp: Megatron's order).
  TimeNs data_parallel_allreduce_time(int stage, Bytes bytes);

 private:
  LayerCost compute(int layer, const SampleShape& shape) const;
  // steps(), with the block of each step (multimodal_model.hpp: -1 outside transformer layers).
  std::vector<Step> steps_and_blocks(int layer, const SampleShape& shape, std::vector<int>& blocks) const;
  // The time of steps[i] and steps[i + 1] run as one overlapped pair, if they are one.
  std::optional<TimeNs> overlapped_pair(const std::vector<Step>& steps, const std::vector<int>& blocks,
                                        std::size_t i) const;

  const MultimodalModel& model_;
  ShardContext base_;
  ClusterCostModel cost_;
  std::uint32_t tp_group_ = 0;
  std::uint32_t tp_neighbours_ = 0;  // TP ranks 0 and 1: a ring exchange's transfers
  bool tp_overlap_ = false;
  std::int64_t ranks_per_stage_ = 1;
  std::map<std::pair<int, int>, std::uint32_t> pair_groups_;
  std::map<int, std::uint32_t> data_parallel_groups_;
  std::map<std::pair<int, SampleShape>, LayerCost> cache_;
};

}  // namespace weft::dip
