#pragma once

#include <cstddef>
#include <span>
#include <vector>

#include "simulator/planner/entrain/pairwise_deferral.hpp"

namespace weft::entrain {

// What one sample costs each side of a vision-language model, as Entrain's cost model estimates it
// (forward and backward, in seconds): the modality encoder's work and the LLM's.
struct SampleWork {
  double encoder = 0.0;
  double llm = 0.0;
};

// DP-level assignment (papers/002 §4.3, Algorithm 4 lines 1-2): samples by encoder work,
// descending (ties keep batch order), each to the replica with the least LLM work so far among
// those not yet holding samples / replicas (ties to the lower replica). Every replica's samples
// are returned in the order they were given to it. `samples` must be a multiple of `replicas`.
std::vector<SampleSet> assign_to_replicas(std::span<const SampleWork> work, int replicas);

// K_eff = min(K, floor(sum of encoder work / the largest)), at least 1 (§4.5.1, line 3): no
// microbatch lighter than the heaviest sample alone.
int effective_microbatches(std::span<const SampleWork> work, const SampleSet& samples, int microbatches);

// Stratified sample assignment (§4.5.1, lines 4-6): `samples` split by LLM work into a coarse half
// S_c (the heavier ceil(n/2); the paper leaves the split open, the median is weft's) and a fine
// half S_f; S_c then S_f, each by encoder work descending, go one by one to the microbatch with the
// least encoder work so far (ties, which samples without encoder work leave, to the one with the
// fewest samples, then the lower index): one LPT list schedule, within (2 - 1/K) of the best
// encoder balance (Graham). Within a microbatch, samples in the order they arrived.
std::vector<SampleSet> stratified_assignment(std::span<const SampleWork> work, const SampleSet& samples,
                                             int microbatches);

// One replica's microbatches as Entrain runs them: stratified assignment into K_eff microbatches,
// then, with `defer`, pairwise deferral of LLM work.
DeferredMicrobatches hierarchical_assignment(std::span<const SampleWork> work, const SampleSet& samples,
                                             int microbatches, bool defer);

}  // namespace weft::entrain
