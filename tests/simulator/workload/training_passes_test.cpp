#include <catch2/catch.hpp>

#include <string>

#include "simulator/planner/memory_estimate.hpp"
#include "tests/simulator/workload/training_test_support.hpp"

namespace weft {
namespace {

// The small Llama with a small vocabulary (so that no loss buffer makes the peak), 8 layers, on
// one GPU (no gathers or collectives whose timing could move the peak): one microbatch of 2,048
// tokens.
TrainingScenario per_op_scenario(const std::string& recompute) {
  return test::scenario_from(
      R"({"model": {"base": "llama3-8b", "layers": 8, "hidden": 2048, "ffn_hidden": 7168, "heads": 16, "kv_heads": 4,)"
      R"( "vocab": 1024}, "cluster": {"base": "dgx-h100", "gpus": 1}, "stack": "pytorch-eager",)"
      R"( "parallel": {"recompute": ")" +
      recompute + R"("}, "training": {"global_batch": 1, "seq_len": 2048}})");
}

// What per-op checkpointing keeps of one layer besides its input, by hand: Q and V (2,048 + 512
// wide), attention's output (2,048) and fp32 log-sum-exp (16 heads), W1's output (7,168) and W2's
// (2,048), for 2,048 tokens in bf16.
constexpr Bytes kKeptPerLayer = 2048 * (2048 + 512 + 2048 + 7168 + 2048) * 2 + 2048 * 16 * 4;

TEST_CASE("Per-op checkpointing keeps each layer's kept outputs until its recompute", "[workload][recompute]") {
  const auto full = test::run_training(per_op_scenario("full"));
  const auto per_op = test::run_training(per_op_scenario("selective"));
  const auto none = test::run_training(per_op_scenario("none"));
  const Bytes extra = per_op.report.stages[0].peak_memory - full.report.stages[0].peak_memory;
  // At the peak, in the last layer's backward, the 7 layers not yet recomputed keep all they kept;
  // the last one at most that, besides the working set full recompute has too.
  CHECK(extra >= 7 * kKeptPerLayer);
  CHECK(extra <= 8 * kKeptPerLayer);
  CHECK(per_op.report.stages[0].peak_memory < none.report.stages[0].peak_memory);
  // It runs again less than full recompute does, and more than nothing.
  CHECK(per_op.report.stages[0].compute_s < full.report.stages[0].compute_s);
  CHECK(per_op.report.stages[0].compute_s > none.report.stages[0].compute_s);
}

TEST_CASE("The memory estimate counts what per-op checkpointing keeps of every layer", "[workload][recompute]") {
  // One microbatch in flight on one stage: the estimates differ by the 8 layers' kept outputs.
  const Bytes full = estimate_stage_memory(per_op_scenario("full")).front();
  const Bytes per_op = estimate_stage_memory(per_op_scenario("selective")).front();
  CHECK(per_op - full == 8 * kKeptPerLayer);
}

}  // namespace
}  // namespace weft
