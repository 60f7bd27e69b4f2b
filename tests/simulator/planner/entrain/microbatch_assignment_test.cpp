#include "simulator/planner/entrain/microbatch_assignment.hpp"

#include <algorithm>
#include <limits>
#include <numeric>
#include <random>

#include <catch2/catch.hpp>

namespace weft::entrain {
namespace {

std::vector<SampleWork> works(const std::vector<double>& encoder, const std::vector<double>& llm) {
  std::vector<SampleWork> out;
  for (std::size_t i = 0; i < encoder.size(); ++i) out.push_back({encoder[i], llm[i]});
  return out;
}

SampleSet all_of(std::size_t n) {
  SampleSet out(n);
  std::iota(out.begin(), out.end(), std::size_t{0});
  return out;
}

TEST_CASE("replicas take samples by encoder work, each the replica with the least LLM work", "[entrain][assignment]") {
  // By encoder work: 0, 1, 2, 3. Sample 0 (LLM 10) to replica 0; 1 to replica 1 (LLM 0 < 10); 2 to
  // replica 1 again (1 < 10), which is then full; 3 to replica 0.
  const std::vector<SampleWork> work = works({9, 8, 7, 6}, {10, 1, 1, 1});
  CHECK(assign_to_replicas(work, 2) == std::vector<SampleSet>{{0, 3}, {1, 2}});
  // Equal LLM work: ties to the lower replica, so replicas alternate.
  CHECK(assign_to_replicas(works({5, 4, 3, 2, 1, 0}, {1, 1, 1, 1, 1, 1}), 2) ==
        std::vector<SampleSet>{{0, 2, 4}, {1, 3, 5}});
  CHECK_THROWS(assign_to_replicas(work, 3));
}

TEST_CASE("K_eff keeps every microbatch at least as heavy as the heaviest sample", "[entrain][assignment]") {
  CHECK(effective_microbatches(works({10, 1, 1, 1}, {1, 1, 1, 1}), all_of(4), 4) == 1);  // 13 / 10
  CHECK(effective_microbatches(works({3, 3, 3, 3}, {1, 1, 1, 1}), all_of(4), 8) == 4);
  CHECK(effective_microbatches(works({3, 3, 3, 3}, {1, 1, 1, 1}), all_of(4), 2) == 2);
  CHECK(effective_microbatches(works({0, 0}, {1, 1}), all_of(2), 2) == 2);  // text only
}

TEST_CASE("stratified assignment deals the heavy-LLM half first, each by encoder work", "[entrain][assignment]") {
  // By LLM work: 0, 1 (coarse), 3, 2 (fine). Coarse by encoder: 0 to MB0 (4), 1 to MB1 (3). Fine by
  // encoder: 2 to MB1 (3 < 4, now 5), 3 to MB0 (4 < 5).
  const std::vector<SampleWork> work = works({4, 3, 2, 1}, {10, 9, 1, 2});
  CHECK(stratified_assignment(work, all_of(4), 2) == std::vector<SampleSet>{{0, 3}, {1, 2}});
}

// The least possible largest encoder load over `k` microbatches, by enumeration.
double best_makespan(const std::vector<double>& encoder, int k) {
  std::vector<int> bin(encoder.size(), 0);
  double best = std::numeric_limits<double>::infinity();
  while (true) {
    std::vector<double> load(static_cast<std::size_t>(k), 0.0);
    for (std::size_t i = 0; i < encoder.size(); ++i) load[static_cast<std::size_t>(bin[i])] += encoder[i];
    best = std::min(best, *std::max_element(load.begin(), load.end()));
    std::size_t i = 0;
    while (i < bin.size() && ++bin[i] == k) bin[i++] = 0;
    if (i == bin.size()) return best;
  }
}

TEST_CASE("stratified assignment keeps the encoder within Graham's bound of the best", "[entrain][assignment]") {
  std::mt19937 random(3);
  std::uniform_real_distribution<double> value(0.0, 10.0);
  for (int instance = 0; instance < 200; ++instance) {
    const std::size_t n = 2 + static_cast<std::size_t>(instance % 7);
    const int k = 2 + instance % 3;
    std::vector<double> encoder(n);
    std::vector<double> llm(n);
    for (std::size_t i = 0; i < n; ++i) {
      encoder[i] = value(random);
      llm[i] = value(random);
    }
    const std::vector<SampleSet> out = stratified_assignment(works(encoder, llm), all_of(n), k);
    REQUIRE(out.size() == static_cast<std::size_t>(k));
    double largest = 0.0;
    SampleSet seen;
    for (const SampleSet& set : out) {
      double load = 0.0;
      for (const std::size_t s : set) load += encoder[s];
      largest = std::max(largest, load);
      seen.insert(seen.end(), set.begin(), set.end());
    }
    std::sort(seen.begin(), seen.end());
    CHECK(seen == all_of(n));
    CHECK(largest <= (2.0 - 1.0 / k) * best_makespan(encoder, k) + 1e-9);
  }
}

TEST_CASE("hierarchical assignment defers only when asked, and loses no sample", "[entrain][assignment]") {
  // Encoder work alike, LLM work skewed: stratified deals one heavy and one light sample each way.
  const std::vector<SampleWork> work = works({1, 1, 1, 1, 1, 1, 1, 1}, {9, 8, 1, 1, 1, 1, 1, 1});
  const DeferredMicrobatches plain = hierarchical_assignment(work, all_of(8), 4, false);
  CHECK(plain.llm == plain.encoder);
  CHECK(plain.deferred == 0);
  const DeferredMicrobatches deferred = hierarchical_assignment(work, all_of(8), 4, true);
  REQUIRE(deferred.encoder.size() == 4);
  SampleSet llm_samples;
  for (const SampleSet& set : deferred.llm) llm_samples.insert(llm_samples.end(), set.begin(), set.end());
  std::sort(llm_samples.begin(), llm_samples.end());
  CHECK(llm_samples == all_of(8));
  double worst_plain = 0.0;
  double worst_deferred = 0.0;
  for (std::size_t m = 0; m < 4; ++m) {
    double a = 0.0;
    double b = 0.0;
    for (const std::size_t s : plain.llm[m]) a += work[s].llm;
    for (const std::size_t s : deferred.llm[m]) b += work[s].llm;
    worst_plain = std::max(worst_plain, a);
    worst_deferred = std::max(worst_deferred, b);
  }
  CHECK(worst_deferred <= worst_plain);
  CHECK(deferred.threshold == Approx(worst_deferred));
}

}  // namespace
}  // namespace weft::entrain
