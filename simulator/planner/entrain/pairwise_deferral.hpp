#pragma once

#include <cstddef>
#include <span>
#include <vector>

namespace weft::entrain {

// The samples of one microbatch, as indices into the batch's samples.
using SampleSet = std::vector<std::size_t>;

// The subset of `values` whose sum is closest to `target` (papers/002 §4.5.2, "optimal deferral
// set"): a subset-sum dynamic program over the values rounded to multiples of `quantum` (> 0),
// O(values x their rounded total). Indices ascending; of subsets equally close, the one with the
// smaller sum, then the one the table reaches first. Exact when every value is a multiple of
// `quantum`.
std::vector<std::size_t> closest_subset_sum(std::span<const double> values, double target, double quantum);

// Which underloaded microbatch each overloaded one runs next to, and whether it defers to it.
struct BottleneckMatching {
  double threshold = 0.0;    // T*: no microbatch's LLM work exceeds it
  std::vector<int> partner;  // per overloaded microbatch: its underloaded one
  std::vector<bool> defers;  // per overloaded microbatch: it hands its deferral set on
};

// BOTTLENECKMATCH (§4.5.2): the smallest T in V ∪ L, and no smaller than `floor` (the LLM work of
// a microbatch paired with none), such that every overloaded microbatch i with L[i] > T is matched
// to its own underloaded j with V[i][j] <= T (a bipartite matching, found by augmenting paths);
// the others are paired, without deferring, with the underloaded microbatches left, in order.
// Binary search over the candidates, since feasibility is monotone in T. V is square (as many
// overloaded as underloaded microbatches); L has one entry per row.
BottleneckMatching bottleneck_match(const std::vector<std::vector<double>>& v, std::span<const double> l, double floor);

// The microbatches of one DP replica after pairwise deferral: the encoder's microbatches in their
// new order, and per position the samples whose LLM work runs there (an overloaded microbatch's
// deferral set runs with its underloaded partner, which follows it at once).
struct DeferredMicrobatches {
  std::vector<SampleSet> encoder;
  std::vector<SampleSet> llm;
  double threshold = 0.0;    // T*, in the units of `llm_work`
  std::size_t deferred = 0;  // samples whose LLM work moved
};

// Pairwise deferral optimisation (§4.5.2, Algorithm 4 lines 7-15) of `microbatches` (the encoder's,
// as stratified assignment left them) given each sample's LLM work: microbatches sorted by LLM work
// (descending; ties keep their order), the top half overloaded, the bottom half underloaded (with
// an odd count the middle one is paired with none and runs last); per pair the deferral set closest
// to half their difference (quantum: the largest microbatch's LLM work / `resolution`), the
// bottleneck cost V_ij = max(w_i - d, w_j + d) (Eq. 4.3), the bottleneck matching, and the
// sequence ol_0, ul_0, ol_1, ul_1, ... in the overloaded microbatches' order.
DeferredMicrobatches pairwise_deferral(std::span<const SampleSet> microbatches, std::span<const double> llm_work,
                                       int resolution = 1024);

}  // namespace weft::entrain
