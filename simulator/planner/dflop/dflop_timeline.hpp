#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "simulator/planner/dflop/model_profiler.hpp"
#include "simulator/planner/dflop/parallelism_search.hpp"

namespace weft::dflop {

// `tokens` padded up to a multiple of `pad_to`, as a bucket's packed sequence is.
inline std::int64_t padded(std::int64_t tokens, std::int64_t pad_to) { return (tokens + pad_to - 1) / pad_to * pad_to; }

// Each component's layers per pipeline stage.
struct StageLayers {
  std::vector<int> encoder;
  std::vector<int> llm;
};

// The stages of `plan`: each component's layers cut into its PP stages whose costliest stage at
// the plan's mean microbatch (t_bsz images, t_seq packed tokens) costs least (papers/002 Eq. 4.1).
StageLayers plan_stage_layers(ModelCosts& costs, const DflopPlan& plan, std::int64_t pad_to);

// One iteration of `plan` on the stage model, priced with weft's per-layer costs. Bucket j is LLM
// replica j % L_dp's microbatch (slot) j / L_dp. Every replica of each component is a pipeline of
// its own ranks. With E_dp = L_dp, encoder replica g runs the images of LLM replica g's buckets
// and hands them to it; otherwise a slot's images (its L_dp buckets') are spread over the E_dp
// encoder replicas, whole images as evenly as they go, and DFLOP's inter-model communicator (§4)
// gathers their activations on one rank and scatters them to every LLM replica (each LLM replica's
// slot waits for every encoder replica's; gradients go back the same way). An LLM replica packs
// its bucket into one sequence padded to `pad_to`: its linear layers priced over the packed
// sequence, its attention over each sample's own. Activations go between consecutive stages of
// a replica, gradients back. Every rank runs 1F1B over the N_mb slots (its warm-up from its place
// in the E_pp + L_pp stages). Each stage's gradients are then all-reduced over its component's
// replicas, overlapped with the last backward pass when the scenario overlaps gradient reduction
// (its stack's overlap_grad_reduce); the optimizer step is not counted. `delays` (seconds
// per sample, or empty) lengthen the forward pass of the LLM's first stage for the bucket holding
// the sample (Anomalies). Returns the makespan.
TimeNs time_iteration(ModelCosts& costs, const DflopPlan& plan, const StageLayers& stages,
                      std::span<const SampleShape> samples, const std::vector<std::vector<std::size_t>>& buckets,
                      std::int64_t pad_to, std::span<const double> delays = {});

// Each sample's durations as a run observes them, in the scheduler's terms (item_durations): its
// share of the costliest stage of each component (the one of most layers) at the plan's t_bsz
// images and t_seq packed tokens, scaled by L_dp / E_dp for the encoder, its attention at its own
// length, from weft's per-layer costs, with its delay (seconds, or none) on the LLM.
ItemDurations observed_durations(ModelCosts& costs, const DflopPlan& plan, const StageLayers& stages,
                                 std::span<const SampleShape> samples, std::int64_t pad_to,
                                 std::span<const double> delays = {});

}  // namespace weft::dflop
