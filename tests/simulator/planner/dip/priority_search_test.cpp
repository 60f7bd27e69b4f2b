// MCTS over segment-group priorities (papers/001 §6.1) against brute force over every valid
// assignment, with an arbitrary score and with the interleaved pipeline's non-bubble share.
#include <catch2/catch.hpp>

#include <algorithm>
#include <numeric>

#include "simulator/core/hash_mix.hpp"
#include "simulator/core/input_error.hpp"
#include "simulator/planner/dip/priority_search.hpp"
#include "simulator/planner/dip/stage_interleaving.hpp"

namespace weft::dip {
namespace {

bool respects(const std::vector<int>& priorities, const std::vector<std::vector<int>>& follows) {
  for (std::size_t g = 0; g < follows.size(); ++g) {
    for (int f : follows[g]) {
      if (priorities[static_cast<std::size_t>(f)] <= priorities[g]) return false;
    }
  }
  return true;
}

// The best score over every permutation of 1..n that respects `follows`.
double brute_force(int n, const std::vector<std::vector<int>>& follows,
                   const std::function<double(const std::vector<int>&)>& score) {
  std::vector<int> priorities(static_cast<std::size_t>(n));
  std::iota(priorities.begin(), priorities.end(), 1);
  double best = 0.0;
  do {
    if (respects(priorities, follows)) best = std::max(best, score(priorities));
  } while (std::next_permutation(priorities.begin(), priorities.end()));
  return best;
}

// A score with no structure to exploit: a hash of the assignment, in [0, 1).
double hashed(const std::vector<int>& priorities) {
  std::uint64_t h = 0;
  for (int p : priorities) h = hash_mix(h, static_cast<std::uint64_t>(p));
  return static_cast<double>(h >> 11) / static_cast<double>(1ULL << 53);
}

TEST_CASE("the search exhausts a small space and finds the best assignment", "[dip][mcts]") {
  const std::vector<std::vector<int>> follows = {{}, {0}, {}, {2}, {1, 3}};
  PrioritySearchOptions options;
  options.max_iterations = 100000;
  const PrioritySearchResult result = search_priorities(5, follows, hashed, options);
  CHECK(result.exhausted);
  CHECK(respects(result.priorities, follows));
  CHECK(result.score == brute_force(5, follows, hashed));
  CHECK(hashed(result.priorities) == result.score);
}

TEST_CASE("the search is deterministic for a seed, with 1 and 2 threads", "[dip][mcts]") {
  const std::vector<std::vector<int>> follows(7);
  PrioritySearchOptions options;
  options.max_iterations = 200;
  const PrioritySearchResult a = search_priorities(7, follows, hashed, options);
  options.threads = 2;
  const PrioritySearchResult b = search_priorities(7, follows, hashed, options);
  CHECK(a.priorities == b.priorities);
  CHECK(a.score == b.score);
  CHECK(a.evaluations == b.evaluations);
  CHECK_FALSE(a.exhausted);  // 7! assignments, 200 expansions
  // Within its budget, it beats most assignments: compare with the median of all of them.
  std::vector<int> priorities(7);
  std::iota(priorities.begin(), priorities.end(), 1);
  std::vector<double> all;
  do all.push_back(hashed(priorities));
  while (std::next_permutation(priorities.begin(), priorities.end()));
  std::sort(all.begin(), all.end());
  CHECK(a.score > all[all.size() * 99 / 100]);
}

TEST_CASE("ranking the segment groups of a pipeline by interleaving them", "[dip][mcts][interleaving]") {
  // Two ranks; four groups, each one microbatch's forward segment (both ranks) and backward
  // segment. Microbatches differ in cost, as multimodal ones do. A group's priority orders its
  // stages among the other groups' stages of the same kind.
  const std::vector<TimeNs> cost = {2, 9, 4, 7};
  auto stages_for = [&](const std::vector<int>& priorities) {
    std::vector<PipelineStage> stages;
    for (std::size_t m = 0; m < cost.size(); ++m) {
      const std::size_t base = stages.size();
      const int p = priorities[m];
      stages.push_back({0, false, cost[m], 1, PipelineStage::kNone, p, {}});
      stages.push_back({1, false, cost[m], 1, PipelineStage::kNone, p, {base}});
      stages.push_back({1, true, 2 * cost[m], 0, base + 1, p, {base + 1}});
      stages.push_back({0, true, 2 * cost[m], 0, base, p, {base + 2}});
    }
    return stages;
  };
  auto non_bubble_share = [&](const std::vector<int>& priorities) {
    const std::vector<PipelineStage> stages = stages_for(priorities);
    const StageSchedule schedule = interleave_stages(stages, 2);
    TimeNs busy = 0;
    for (const PipelineStage& stage : stages) busy += stage.duration;
    return static_cast<double>(busy) / static_cast<double>(2 * schedule.makespan);
  };
  const std::vector<std::vector<int>> follows(4);
  PrioritySearchOptions options;
  options.max_iterations = 10000;
  options.threads = 2;
  const PrioritySearchResult result = search_priorities(4, follows, non_bubble_share, options);
  CHECK(result.exhausted);
  CHECK(result.score == brute_force(4, follows, non_bubble_share));
  // The given order (microbatch 0 first) is no better than what the search finds.
  CHECK(result.score >= non_bubble_share({4, 3, 2, 1}));
}

TEST_CASE("priority searches that cannot start are refused", "[dip][mcts]") {
  CHECK_THROWS_AS(search_priorities(0, {}, hashed), InputError);
  CHECK_THROWS_AS(search_priorities(2, {{}}, hashed), InputError);
  CHECK_THROWS_AS(search_priorities(2, {{1}, {}}, hashed), InputError);
  PrioritySearchOptions none;
  none.rollouts = 0;
  CHECK_THROWS_AS(search_priorities(2, {{}, {}}, hashed, none), InputError);
  PrioritySearchOptions no_threads;
  no_threads.threads = 0;
  CHECK_THROWS_AS(search_priorities(2, {{}, {}}, hashed, no_threads), InputError);
}

// Whether each group, in index order, took one of the `window` largest values still free.
bool within_window(const std::vector<int>& priorities, int window) {
  std::vector<int> free(priorities.size());
  std::iota(free.begin(), free.end(), 1);
  for (int p : priorities) {
    const auto at = std::find(free.begin(), free.end(), p);
    if (free.end() - at > window) return false;
    free.erase(at);
  }
  return true;
}

TEST_CASE("a window limits the search to local reorderings, and it finds the best of them", "[dip][mcts]") {
  const int n = 6;
  const std::vector<std::vector<int>> follows(n);
  std::vector<int> priorities(n);
  std::iota(priorities.begin(), priorities.end(), 1);
  double best = 0.0;
  int admissible = 0;
  do {
    if (!within_window(priorities, 2)) continue;
    ++admissible;
    best = std::max(best, hashed(priorities));
  } while (std::next_permutation(priorities.begin(), priorities.end()));
  CHECK(admissible == 32);  // two choices for each group but the last: 2^5
  PrioritySearchOptions options;
  options.window = 2;
  options.max_iterations = 100000;
  const PrioritySearchResult result = search_priorities(n, follows, hashed, options);
  CHECK(result.exhausted);
  CHECK(within_window(result.priorities, 2));
  CHECK(result.score == best);
  // A window of one leaves index order alone.
  options.window = 1;
  const PrioritySearchResult one = search_priorities(n, follows, hashed, options);
  CHECK(one.exhausted);
  CHECK(one.priorities == std::vector<int>{6, 5, 4, 3, 2, 1});
}

}  // namespace
}  // namespace weft::dip
