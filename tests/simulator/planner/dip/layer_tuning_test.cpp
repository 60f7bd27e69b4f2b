// Layer tuning (papers/001 §6.3): candidates per stage pair against brute force over every
// combination of layer options, and the CBC integer program against brute force over every
// choice of candidates.
#include <catch2/catch.hpp>

#include <random>

#include "simulator/core/input_error.hpp"
#include "simulator/planner/dip/layer_tuning.hpp"

namespace weft::dip {
namespace {

using Catch::Matchers::Contains;

// Every combination of one option per layer, as (memory, latency).
std::vector<std::pair<Bytes, TimeNs>> all_combinations(const std::vector<std::vector<LayerOption>>& layers) {
  std::vector<std::pair<Bytes, TimeNs>> all = {{0, 0}};
  for (const auto& options : layers) {
    std::vector<std::pair<Bytes, TimeNs>> grown;
    for (const auto& [memory, latency] : all) {
      for (const LayerOption& option : options) grown.emplace_back(memory + option.memory, latency + option.latency);
    }
    all = std::move(grown);
  }
  return all;
}

TEST_CASE("candidates are the fastest, the leanest and the fastest within each memory bucket", "[dip][tuning]") {
  // Per layer: keep (time 10, 100 bytes), recompute (time 14, 20 bytes), offload (time 12, 50 bytes).
  const std::vector<LayerOption> options = {{10, 100}, {14, 20}, {12, 50}};
  const std::vector<std::vector<LayerOption>> layers(4, options);
  const auto candidates = pair_candidates(layers, 5);
  const auto all = all_combinations(layers);
  REQUIRE(candidates.size() >= 2);
  CHECK(candidates.front().memory == 400);  // all kept: the fastest
  CHECK(candidates.front().latency == 40);
  CHECK(candidates.back().memory == 80);  // all recomputed: the leanest
  CHECK(candidates.back().latency == 56);
  // Each bucket bound 80 + 320 q / 4 (q = 3, 2, 1): the brute-force fastest within it.
  std::size_t c = 1;
  for (int q = 3; q >= 1; --q) {
    const Bytes bound = 80 + 320 * q / 4;
    TimeNs fastest = std::numeric_limits<TimeNs>::max();
    for (const auto& [memory, latency] : all) {
      if (memory <= bound) fastest = std::min(fastest, latency);
    }
    INFO("bound " << bound);
    REQUIRE(c < candidates.size());
    CHECK(candidates[c].memory <= bound);
    CHECK(candidates[c].latency == fastest);
    ++c;
  }
  // Each candidate's options add up to it.
  for (const TuningCandidate& candidate : candidates) {
    TimeNs latency = 0;
    Bytes memory = 0;
    for (std::size_t l = 0; l < layers.size(); ++l) {
      latency += options[static_cast<std::size_t>(candidate.options[l])].latency;
      memory += options[static_cast<std::size_t>(candidate.options[l])].memory;
    }
    CHECK(latency == candidate.latency);
    CHECK(memory == candidate.memory);
  }
  CHECK_THROWS_AS(pair_candidates({{}}, 3), InputError);
}

// The least total latency over every choice of candidates that fits, or -1.
TimeNs brute_force(const std::vector<StagePair>& pairs, Bytes limit) {
  std::vector<int> choice(pairs.size(), 0);
  TimeNs best = -1;
  while (true) {
    if (fits(pairs, choice, limit)) {
      TimeNs total = 0;
      for (std::size_t i = 0; i < pairs.size(); ++i)
        total += pairs[i].candidates[static_cast<std::size_t>(choice[i])].latency;
      if (best < 0 || total < best) best = total;
    }
    std::size_t i = 0;
    while (i < pairs.size() && ++choice[i] == static_cast<int>(pairs[i].candidates.size())) choice[i++] = 0;
    if (i == pairs.size()) return best;
  }
}

// Random stage pairs and the candidates they point at.
struct RandomPairs {
  std::vector<std::vector<TuningCandidate>> candidates;
  std::vector<StagePair> pairs;
};

RandomPairs random_pairs(std::mt19937_64& rng) {
  auto uniform = [&](std::int64_t lo, std::int64_t hi) {
    return std::uniform_int_distribution<std::int64_t>(lo, hi)(rng);
  };
  RandomPairs out;
  const auto count = static_cast<std::size_t>(uniform(4, 7));
  out.candidates.resize(count);
  for (std::size_t i = 0; i < count; ++i) {
    StagePair& pair = out.pairs.emplace_back();
    pair.rank = static_cast<int>(uniform(0, 1));
    pair.start = uniform(0, 30);
    pair.end = pair.start + uniform(10, 40);
    // Leaner candidates cost more time, as recompute and offload do.
    const int k = static_cast<int>(uniform(2, 3));
    Bytes memory = uniform(60, 100);
    TimeNs latency = uniform(10, 30);
    for (int j = 0; j < k; ++j) {
      out.candidates[i].push_back({latency, memory, {}});
      memory -= uniform(10, 40);
      latency += uniform(1, 20);
    }
    pair.candidates = out.candidates[i];
  }
  return out;
}

TEST_CASE("the integer program finds the brute-force optimum, and the greedy choice fits", "[dip][tuning]") {
  std::mt19937_64 rng(11);
  int solved = 0, infeasible = 0, greedy_optimal = 0;
  for (int trial = 0; trial < 150; ++trial) {
    INFO("trial " << trial);
    const RandomPairs random = random_pairs(rng);
    const std::vector<StagePair>& pairs = random.pairs;
    const Bytes limit = std::uniform_int_distribution<Bytes>(100, 300)(rng);
    const TimeNs best = brute_force(pairs, limit);
    if (best < 0) {
      CHECK_THROWS_WITH(solve_tuning(pairs, limit, 0.0), Contains("is too small"));
      ++infeasible;
      continue;
    }
    const TuningChoice greedy = greedy_tuning(pairs, limit);
    CHECK(fits(pairs, greedy.candidate, limit));
    CHECK(greedy.latency >= best);
    const TuningChoice exact = solve_tuning(pairs, limit, 0.0);
    CHECK(fits(pairs, exact.candidate, limit));
    CHECK(exact.latency == best);
    const TuningChoice within = solve_tuning(pairs, limit, 0.05);
    CHECK(fits(pairs, within.candidate, limit));
    CHECK(static_cast<double>(within.latency) <= 1.05 * static_cast<double>(best));
    ++solved;
    greedy_optimal += greedy.latency == best ? 1 : 0;
  }
  WARN(solved << " instances solved, " << infeasible << " infeasible; the greedy warm start was optimal in "
              << greedy_optimal);
  CHECK(solved > 50);
  CHECK(infeasible > 5);
  CHECK(greedy_optimal < solved);  // the solver improves on its warm start
}

}  // namespace
}  // namespace weft::dip
