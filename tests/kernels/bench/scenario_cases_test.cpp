#include <catch2/catch.hpp>

#include <map>
#include <set>

#include "kernels/bench/scenario_cases.hpp"
#include "simulator/core/json_cursor.hpp"
#include "simulator/workload/training_workload.hpp"
#include "tests/support/cpu_scenario.hpp"

namespace weft {
namespace {

struct TinyGptOnTwoRanks {
  JsonDocument document = JsonDocument::parse_text(test::tiny_gpt_scenario(R"({"tp": 2})"), "tiny-gpt-tp2.json");
  TrainingScenario scenario = load_training_scenario(document.root());
  TrainingWorkload workload = build_training_workload(scenario, {.composites = false});

  ScenarioCases cases(int ranks, std::vector<BenchPart> parts) const {
    SuiteOptions suite;
    suite.ranks = ranks;
    suite.parts = std::move(parts);
    return scenario_bench_cases(workload.graph, *workload.cost_model, suite);
  }
};

using Shapes = std::set<std::vector<std::int64_t>>;

TEST_CASE("a scenario's GEMMs are timed in the layouts and shapes of its linear layers", "[kernels][bench]") {
  const TinyGptOnTwoRanks tiny;
  std::map<Kernel, Shapes> gemms;
  for (const BenchCase& c : tiny.cases(1, {BenchPart::gemm}).cases) {
    REQUIRE(c.op == OpClass::gemm);
    CHECK_FALSE(c.grid);  // each a point of its own
    CHECK(c.dtype == Dtype::bf16);
    CHECK_FALSE(c.label.empty());
    gemms[c.kernel].insert(c.shape);
  }
  // 64 tokens a microbatch; hidden 128, FFN 512, vocabulary 1024, split over TP 2. Each linear
  // layer of `in` -> `out` features runs forward Y = X W^T (nt) {tokens, out, in}, input gradient
  // dX = dY W (nn) {tokens, in, out}, weight gradient dW = dY^T X (tn) {out, in, tokens}.
  const std::int64_t t = 64;
  const std::vector<std::pair<std::int64_t, std::int64_t>> linears = {
      {128, 3 * 128 / 2},  // qkv, column-parallel
      {128 / 2, 128},      // attention projection, row-parallel
      {128, 512 / 2},      // fc1, column-parallel
      {512 / 2, 128},      // fc2, row-parallel
      {128, 1024 / 2},     // logits, column-parallel
  };
  std::map<Kernel, Shapes> expected;
  for (const auto& [in, out] : linears) {
    expected[Kernel::nt].insert({t, out, in});
    expected[Kernel::nn].insert({t, in, out});
    expected[Kernel::tn].insert({out, in, t});
  }
  CHECK(gemms == expected);
}

TEST_CASE("a scenario's attention, memory-bound ops and collectives are timed where the job can place them",
          "[kernels][bench]") {
  const TinyGptOnTwoRanks tiny;
  const std::vector<BenchPart> all = {BenchPart::attention, BenchPart::memory, BenchPart::collectives, BenchPart::p2p};
  const ScenarioCases alone = tiny.cases(1, all);
  // One rank cannot form the TP pair: its all-reduces are left out and named.
  CHECK(alone.unplaced == std::vector<std::pair<int, int>>{{2, 2}});
  std::set<OpClass> ops;
  Shapes attention;
  for (const BenchCase& c : alone.cases) {
    ops.insert(c.op);
    if (c.op == OpClass::attention_fwd || c.op == OpClass::attention_bwd) attention.insert(c.shape);
    if (c.op == OpClass::elementwise) CHECK(c.shape.at(1) > 0);
  }
  CHECK(ops == std::set<OpClass>{OpClass::attention_fwd, OpClass::attention_bwd, OpClass::elementwise});
  // Batch 1, 4 heads over TP 2, 64 queries and keys, head size 128 / 4, causal.
  CHECK(attention == Shapes{{1, 2, 64, 64, 32, 1}});

  const ScenarioCases pair = tiny.cases(2, {BenchPart::collectives});
  CHECK(pair.unplaced.empty());
  REQUIRE_FALSE(pair.cases.empty());
  for (const BenchCase& c : pair.cases) {
    CHECK(c.op == OpClass::allreduce);
    CHECK(c.shape.at(1) == 2);  // the TP pair, on one node
    CHECK(c.shape.at(2) == 2);
    CHECK(c.shape.at(0) % 4 == 0);  // whole bf16 elements on each rank
  }
}

}  // namespace
}  // namespace weft
