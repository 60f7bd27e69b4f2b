#pragma once

#include <span>
#include <vector>

#include "simulator/core/units.hpp"

namespace weft::dip {

// PipeWeaver's model layer tuning (papers/001 §6.3): for each stage pair (a forward stage and its
// backward), choose how its layers save memory (keep, recompute, offload, ...) so that the
// schedule fits in memory at the least added time.

// What one strategy costs one layer: time (forward and backward together) and memory held from
// the forward to the backward.
struct LayerOption {
  TimeNs latency = 0;
  Bytes memory = 0;
};

// A strategy for a whole stage pair: one option per layer, summed.
struct TuningCandidate {
  TimeNs latency = 0;
  Bytes memory = 0;
  std::vector<int> options;  // per layer, the option chosen
};

// Up to `k` (>= 2) candidates for a stage pair whose layers have `layers[l]` options each: the
// fastest, the one holding the least memory, and, with the memory range between them split into
// k - 1 equal parts, at each of the k - 2 inner bounds the fastest whose memory stays within it
// (a multiple-choice knapsack, solved exactly over the Pareto front of (memory, time)
// combinations). The paper's "k - 2 buckets" each get the fastest candidate they can hold.
// Candidates are distinct and sorted by memory, most first. InputError when a layer has no option.
std::vector<TuningCandidate> pair_candidates(const std::vector<std::vector<LayerOption>>& layers, int k);

// A stage pair placed by the interleaved schedule: on `rank`, holding its candidate's memory from
// `start` to `end`.
struct StagePair {
  int rank = 0;
  TimeNs start = 0;
  TimeNs end = 0;
  std::span<const TuningCandidate> candidates;  // its pair_candidates, held by the caller
};

struct TuningChoice {
  std::vector<int> candidate;  // per stage pair
  TimeNs latency = 0;          // the sum of the chosen candidates' latencies
};

// Whether `choice` keeps every rank within `memory_limit` at the start of each of its stage pairs,
// counting the pairs that hold memory then (start <= s < end), as the §6.3 constraints do.
bool fits(const std::vector<StagePair>& pairs, const std::vector<int>& choice, Bytes memory_limit);

// A feasible choice by a greedy rule: every pair at its fastest candidate, then, while a rank's
// memory overflows at some instant, the pair live there whose next leaner candidate saves the most
// memory per added nanosecond switches to it. InputError when even the leanest candidates
// overflow.
TuningChoice greedy_tuning(const std::vector<StagePair>& pairs, Bytes memory_limit);

// The §6.3 integer program, solved with COIN-OR CBC: binary o_ij per pair and candidate, one per
// pair, minimising the summed latency under the memory constraints; warm-started with the greedy
// choice, stopped within `gap` (relative) of the optimum. InputError when nothing fits.
TuningChoice solve_tuning(const std::vector<StagePair>& pairs, Bytes memory_limit, double gap = 0.05);

}  // namespace weft::dip
