#pragma once

#include <cstdint>
#include <functional>
#include <vector>

namespace weft::dip {

struct PrioritySearchOptions {
  // The UCB rule's exponent on a node's best score and weight of its exploration term
  // (papers/001 Algorithm 1: s_v^alpha + beta sqrt(ln N_x / N_v)).
  double alpha = 1.0;
  double beta = 0.5;
  int rollouts = 10;  // random completions scored per expanded node
  std::uint64_t seed = 1;
  std::int64_t max_iterations = 1000;  // expansions; the search also ends when the space is exhausted
  // Nodes expanded per round: selected one after another (a node waiting for its score is not
  // selected again), their rollouts scored in parallel on `threads` oneTBB workers, their scores
  // propagated in order. The answer depends on the batch, not on the threads.
  int batch = 8;
  int threads = 1;
  // 0: any valid value for each group, as Algorithm 1. W > 0: each group, in index order, takes one
  // of the W largest values still valid, in the tree and in rollouts alike: the space of rankings
  // that reorder groups only locally (W = 1 leaves one ranking, index order first).
  int window = 0;
  // Seconds of wall-clock time after which no new round starts (0: none). With a budget, how far
  // the search gets depends on the machine; without one, only on the seed and the batch.
  double time_budget_s = 0.0;
  // Asked before each round: true ends the search as the budget does (a Ctrl-C).
  std::function<bool()> stop;
};

// When the search found a better assignment.
struct SearchImprovement {
  double seconds = 0.0;  // since the search started
  std::int64_t evaluations = 0;
  double score = 0.0;
};

struct PrioritySearchResult {
  std::vector<int> priorities;  // per group, a distinct value in 1..n; larger runs first
  double score = 0.0;
  std::int64_t iterations = 0;
  std::int64_t evaluations = 0;  // calls of the score function
  bool exhausted = false;        // every valid assignment was seen
  std::vector<SearchImprovement> improvements;
};

// PipeWeaver's modality-module-level ranking (papers/001 §6.1, Algorithm 1): Monte-Carlo tree
// search over assignments of distinct priorities 1..n to n pipeline segment groups, the node at
// depth d fixing group d's. Nodes are selected by the UCB rule from the root down to one not
// fully expanded, a child is added, `rollouts` random completions of it are scored (`score`, the
// share of non-bubble time of the interleaved schedule, larger is better) and the best one is
// propagated up as the maximum of every ancestor's score. A group's priority must be smaller
// than those of the groups it follows (`follows[g]`: groups with smaller indices), so that a
// segment never runs before the one it depends on. Deterministic for a seed, whatever the number
// of threads; `score` is called from several threads at once when there are several.
PrioritySearchResult search_priorities(int groups, const std::vector<std::vector<int>>& follows,
                                       const std::function<double(const std::vector<int>&)>& score,
                                       const PrioritySearchOptions& options = {});

}  // namespace weft::dip
