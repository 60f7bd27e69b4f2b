// Full recompute of some layers only (parallel.recompute_layers): Megatron-LM's block method and
// torchtitan's every-k-th-layer checkpointing; and Megatron-LM's uniform groups of layers.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "simulator/planner/memory_estimate.hpp"
#include "tests/simulator/workload/training_test_support.hpp"

namespace weft {
namespace {

using Catch::Matchers::Contains;

// The small Llama (8 identical layers) with a small vocabulary, so that no loss buffer makes the
// peak, one microbatch of 2,048 tokens per rank.
TrainingScenario scenario(const std::string& parallel, int gpus = 1) {
  return test::scenario_from(
      R"({"model": {"base": "llama3-8b", "layers": 8, "hidden": 2048, "ffn_hidden": 7168, "heads": 16, "kv_heads": 4,)"
      R"( "vocab": 1024}, "cluster": {"base": "dgx-h100", "gpus": )" +
      std::to_string(gpus) + R"(}, "parallel": )" + parallel +
      R"(, "training": {"global_batch": 4, "seq_len": 2048}})");
}

using Mask = std::vector<std::uint8_t>;

TEST_CASE("recompute_layers picks the first layers of each chunk, or every k-th of each rank",
          "[workload][recompute]") {
  // pp 2 with 2 chunks a rank: virtual stages of 2 layers; rank 0 holds layers 0-1 and 4-5, rank 1
  // layers 2-3 and 6-7.
  const std::string interleaved = R"({"pp": 2, "vpp": 2, "schedule": "interleaved", "recompute": "full")";
  CHECK(scenario(interleaved + "}", 2).recomputed_layers() == Mask(8, 1));
  CHECK(scenario(interleaved + R"(, "recompute_layers": {"first": 1}})", 2).recomputed_layers() ==
        Mask{1, 0, 1, 0, 1, 0, 1, 0});
  // Counted from 1 over each rank's layers in chunk order: rank 0's third is layer 4, rank 1's is 6.
  CHECK(scenario(interleaved + R"(, "recompute_layers": {"every": 3}})", 2).recomputed_layers() ==
        Mask{0, 0, 0, 0, 1, 0, 1, 0});
  // More layers than a chunk holds: all of them.
  CHECK(scenario(interleaved + R"(, "recompute_layers": {"first": 5}})", 2).recomputed_layers() == Mask(8, 1));
  CHECK(scenario(R"({"recompute": "none"})").recomputed_layers() == Mask(8, 0));
  CHECK(scenario(R"({"recompute": "full", "recompute_layers": {"every": 2}})").recomputed_layers() ==
        Mask{0, 1, 0, 1, 0, 1, 0, 1});
}

TEST_CASE("recomputing half the identical layers costs half of full recompute, in time and memory",
          "[workload][recompute]") {
  const TrainingScenario none = scenario(R"({"recompute": "none"})");
  const TrainingScenario full = scenario(R"({"recompute": "full"})");
  const TrainingScenario first = scenario(R"({"recompute": "full", "recompute_layers": {"first": 4}})");
  const TrainingScenario every = scenario(R"({"recompute": "full", "recompute_layers": {"every": 2}})");
  const auto none_run = test::run_training(none);
  const auto full_run = test::run_training(full);
  const auto first_run = test::run_training(first);
  const auto every_run = test::run_training(every);
  auto compute = [](const test::TrainingRun& run) { return run.report.stages[0].compute_s; };
  auto peak = [](const test::TrainingRun& run) { return run.report.stages[0].peak_memory; };
  // Four of the eight layers run their forward again.
  CHECK(compute(first_run) - compute(none_run) == Approx((compute(full_run) - compute(none_run)) / 2).epsilon(1e-9));
  CHECK(compute(every_run) == Approx(compute(first_run)).epsilon(1e-9));
  // The estimate: four layers keep their input only, four every activation.
  const Bytes estimate_none = estimate_stage_memory(none).front();
  const Bytes estimate_full = estimate_stage_memory(full).front();
  CHECK(2 * estimate_stage_memory(first).front() == estimate_none + estimate_full);
  CHECK(estimate_stage_memory(every).front() == estimate_stage_memory(first).front());
  // The simulated peak, at the start of the backward pass: four layers' activations fewer than
  // with none kept whole, by what the estimate counts per layer.
  const Bytes per_layer = (estimate_none - estimate_full) / 8;
  CHECK(peak(none_run) - peak(first_run) == 4 * per_layer);
  CHECK(peak(full_run) < peak(first_run));
}

TEST_CASE("Megatron's uniform groups keep one input a group and rerun a group at once", "[workload][recompute]") {
  const TrainingScenario none = scenario(R"({"recompute": "none"})");
  const TrainingScenario full = scenario(R"({"recompute": "full"})");
  const auto full_run = test::run_training(full);
  auto uniform = [](int n) {
    return scenario(R"({"recompute": "full", "recompute_layers": {"uniform": )" + std::to_string(n) + "}}");
  };
  // A layer's checkpoint is its input, 2,048 tokens x 2,048 bf16; a layer kept whole holds what
  // the estimate counts per layer besides it.
  const Bytes checkpoint = 2048 * 2048 * 2;
  const Bytes estimate_full = estimate_stage_memory(full).front();
  const Bytes kept_layer = (estimate_stage_memory(none).front() - estimate_full) / 8 + checkpoint;
  for (const int n : {1, 2, 3, 4, 8}) {
    INFO("groups of " << n);
    const auto run = test::run_training(uniform(n));
    // Every layer's forward runs again, as under full recompute.
    CHECK(run.report.stages[0].compute_s == full_run.report.stages[0].compute_s);
    CHECK(run.report.iteration_time_s == full_run.report.iteration_time_s);
    // The estimate: one checkpoint a group of the 8 layers.
    const Bytes groups = (8 + n - 1) / n;
    CHECK(estimate_full - estimate_stage_memory(uniform(n)).front() == (8 - groups) * checkpoint);
    // The peak comes in the backward pass of some group g (0-based, of n_g layers): the
    // checkpoints of groups 0..g and its n_g layers rerun at once, where full recompute holds all 8
    // checkpoints and one layer.
    Bytes expected = 0;
    for (Bytes g = 0; g < groups; ++g) {
      const Bytes layers = std::min<Bytes>(n, 8 - g * n);
      expected = std::max(expected, (g + 1 - 8) * checkpoint + (layers - 1) * kept_layer);
    }
    CHECK(run.report.stages[0].peak_memory - full_run.report.stages[0].peak_memory == expected);
  }
}

TEST_CASE("recompute_layers is refused where it cannot apply, naming the field", "[workload][recompute][errors]") {
  CHECK_THROWS_WITH(scenario(R"({"recompute": "selective", "recompute_layers": {"first": 2}})"),
                    Contains("parallel.recompute_layers: picks the layers that full recompute checkpoints") &&
                        Contains("(it is 'selective')"));
  CHECK_THROWS_WITH(scenario(R"({"recompute_layers": {"every": 2}})"), Contains("(it is 'none')"));
  CHECK_THROWS_WITH(scenario(R"({"recompute": "full", "recompute_layers": {"first": 0}})"),
                    Contains("parallel.recompute_layers.first"));
  CHECK_THROWS_WITH(scenario(R"({"recompute": "full", "recompute_layers": {}})"),
                    Contains("parallel.recompute_layers: expected one of {\"first\": N}"));
  CHECK_THROWS_WITH(scenario(R"({"recompute": "full", "recompute_layers": {"first": 1, "every": 2}})"),
                    Contains("parallel.recompute_layers: expected one of"));
  CHECK_THROWS_WITH(scenario(R"({"recompute": "full", "recompute_layers": {"last": 2}})"),
                    Contains("parallel.recompute_layers.last: unknown field"));
  CHECK_THROWS_WITH(scenario(R"({"recompute": "full", "recompute_layers": 2})"),
                    Contains("parallel.recompute_layers: expected an object"));
  CHECK_THROWS_WITH(scenario(R"({"recompute": "full", "recompute_layers": {"uniform": 0}})"),
                    Contains("parallel.recompute_layers.uniform"));
  CHECK_THROWS_WITH(scenario(R"({"recompute": "full", "recompute_layers": {"uniform": 2}, "dp": 1, "zero": 3})"),
                    Contains("parallel.recompute_layers: ZeRO-3 gathers one layer's parameters at a time"));
}

}  // namespace
}  // namespace weft
