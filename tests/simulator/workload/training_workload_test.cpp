#include "simulator/workload/training_workload.hpp"

#include <fmt/format.h>
#include <catch2/catch.hpp>

#include "tests/simulator/workload/training_test_support.hpp"

namespace weft {
namespace {

using Catch::Matchers::Contains;
using Catch::Matchers::Equals;
using test::kSmallLlama;
using test::run_training;
using test::scenario_from;

std::string small_plan(const std::string& model, int gpus, const std::string& parallel, int global_batch,
                       int seq_len = 2048, const std::string& options = "{}") {
  return fmt::format(R"({{"model": {}, "cluster": {{"base": "dgx-h100", "gpus": {}}}, "parallel": {},
                         "training": {{"global_batch": {}, "seq_len": {}}}, "options": {}}})",
                     model, gpus, parallel, global_batch, seq_len, options);
}

const std::string kSmallGpt = R"({"base": "gpt3-1.3b", "layers": 8})";

// Plans on 8 GPUs covering every schedule, recompute policy, ZeRO-1, CP algorithm and VPP.
const std::vector<std::pair<std::string, std::string>> kPlanCases = {
    {kSmallLlama, R"({"tp": 2, "pp": 2, "dp": 2, "sequence_parallel": true, "zero": 1})"},
    {kSmallLlama, R"({"tp": 2, "cp": 2, "pp": 2, "dp": 1, "sequence_parallel": true})"},
    {kSmallLlama, R"({"tp": 1, "cp": 2, "pp": 1, "dp": 4, "cp_algorithm": "allgather", "zero": 1})"},
    {kSmallLlama, R"({"tp": 2, "pp": 2, "dp": 2, "vpp": 2, "schedule": "interleaved"})"},
    {kSmallLlama, R"({"tp": 2, "pp": 2, "dp": 2, "schedule": "zb-h1", "recompute": "full"})"},
    {kSmallGpt, R"({"tp": 2, "pp": 2, "dp": 2, "recompute": "selective", "schedule": "gpipe"})"},
};

TEST_CASE("folded and unfolded simulations give the same iteration time", "[workload][folding]") {
  for (const auto& [model, parallel] : kPlanCases) {
    INFO(parallel);
    const TrainingScenario scenario = scenario_from(small_plan(model, 8, parallel, 16));
    const auto folded = run_training(scenario, false);
    const auto unfolded = run_training(scenario, true);
    CHECK(unfolded.workload.ranks.size() == 8);
    CHECK(folded.workload.ranks.size() == static_cast<std::size_t>(scenario.parallel.pp));
    CHECK(folded.result.makespan == unfolded.result.makespan);
    for (std::size_t s = 0; s < folded.report.stages.size(); ++s) {
      CHECK(folded.report.stages[s].peak_memory == unfolded.report.stages[s].peak_memory);
    }
  }
}

TEST_CASE("passes as composites give the same answer as every op in the graph", "[workload][reuse]") {
  // The graph with composites is simulated by stamping templates; the one without is built op by
  // op and simulated op by op. Every time and byte must agree.
  for (const bool unfold : {false, true}) {
    for (const auto& [model, parallel] : kPlanCases) {
      INFO(parallel << (unfold ? " unfolded" : " folded"));
      const TrainingScenario scenario = scenario_from(small_plan(model, 8, parallel, 16));
      const auto composed = run_training(scenario, {.unfold = unfold, .composites = true});
      const auto expanded = run_training(scenario, {.unfold = unfold, .composites = false});
      CHECK(composed.result.reused_subgraphs);
      CHECK(composed.workload.graph.op_count() < expanded.workload.graph.op_count() / 4);
      CHECK(composed.report.simulated_ops == expanded.workload.graph.op_count());
      REQUIRE(composed.result.makespan == expanded.result.makespan);
      REQUIRE(composed.result.devices.size() == expanded.result.devices.size());
      for (std::size_t d = 0; d < expanded.result.devices.size(); ++d) {
        const DeviceResult& a = composed.result.devices[d];
        const DeviceResult& b = expanded.result.devices[d];
        CHECK(a.peak_memory == b.peak_memory);
        CHECK(a.peak_memory_time == b.peak_memory_time);
        CHECK(a.busy_ns == b.busy_ns);
        CHECK(a.busy_by_category == b.busy_by_category);
      }
      for (std::size_t s = 0; s < expanded.report.stages.size(); ++s) {
        CHECK(composed.report.stages[s].compute_s == expanded.report.stages[s].compute_s);
        CHECK(composed.report.stages[s].bubble_s == expanded.report.stages[s].bubble_s);
        CHECK(composed.report.stages[s].exposed_comm_s == expanded.report.stages[s].exposed_comm_s);
      }
    }
  }
}

TEST_CASE("data parallelism adds gradient reduction and shards the optimizer under ZeRO-1", "[workload]") {
  const auto plain = run_training(scenario_from(small_plan(kSmallLlama, 4, R"({"tp": 4, "dp": 1})", 8)));
  const auto zero = run_training(scenario_from(small_plan(kSmallLlama, 8, R"({"tp": 4, "dp": 2, "zero": 1})", 16)));
  const StaticMemory& one = plain.report.stages[0].static_memory;
  const StaticMemory& two = zero.report.stages[0].static_memory;
  CHECK(two.parameters == one.parameters);
  CHECK(two.optimizer_states == one.optimizer_states / 2);
  // 12 bytes of fp32 master weights and Adam moments per parameter, 2 of bf16 parameters.
  CHECK(one.optimizer_states == 6 * one.parameters);
  CHECK(zero.report.stages[0].exposed_comm_s[static_cast<std::size_t>(CommGroupKind::dp)] >= 0.0);
  CHECK(plain.report.stages[0].exposed_comm_s[static_cast<std::size_t>(CommGroupKind::dp)] == 0.0);
  // bf16 training keeps fp32 gradients (Megatron-Core, the default stack): 4 bytes per parameter.
  CHECK(one.gradients == 2 * one.parameters);
  CHECK(two.gradients == one.gradients);
}

TEST_CASE("ZeRO-2 shards the gradients as ZeRO-1 shards the optimizer states, fp16 keeps 16-bit gradients",
          "[workload]") {
  const auto one = run_training(scenario_from(small_plan(kSmallLlama, 8, R"({"tp": 4, "dp": 2, "zero": 1})", 16)));
  const auto two = run_training(scenario_from(small_plan(kSmallLlama, 8, R"({"tp": 4, "dp": 2, "zero": 2})", 16)));
  const StaticMemory& sharded_states = one.report.stages[0].static_memory;
  const StaticMemory& sharded_gradients = two.report.stages[0].static_memory;
  CHECK(sharded_gradients.gradients == sharded_states.gradients / 2);
  CHECK(sharded_gradients.optimizer_states == sharded_states.optimizer_states);
  CHECK(sharded_gradients.parameters == sharded_states.parameters);
  // The same communication (a reduce-scatter of the gradients and an all-gather of the
  // parameters), exposed alike; the optimizer step zeroes only the gradients the rank keeps, half
  // of them, so the iteration is shorter by exactly the compute that saves.
  const auto dp = static_cast<std::size_t>(CommGroupKind::dp);
  CHECK(two.report.stages[0].exposed_comm_s[dp] == Approx(one.report.stages[0].exposed_comm_s[dp]));
  CHECK(two.report.iteration_time_s < one.report.iteration_time_s);
  CHECK(one.report.iteration_time_s - two.report.iteration_time_s ==
        Approx(one.report.stages[0].compute_s - two.report.stages[0].compute_s).epsilon(1e-6));

  std::string fp16 = small_plan(kSmallLlama, 8, R"({"tp": 4, "dp": 2, "zero": 1})", 16);
  fp16.replace(fp16.find("\"seq_len\""), 0, R"("dtype": "fp16", )");
  const auto half = run_training(scenario_from(fp16));
  CHECK(half.report.stages[0].static_memory.gradients == half.report.stages[0].static_memory.parameters);
}

TEST_CASE("1F1B keeps p - s microbatches of activations on stage s", "[workload][memory]") {
  // Stages 1 and 2 hold only layers; one more microbatch in flight is the difference of their
  // peaks, and each peak is that many microbatches plus transient buffers.
  const TrainingScenario scenario = scenario_from(
      small_plan(kSmallLlama, 4, R"({"tp": 1, "pp": 4, "dp": 1})", 16, 2048, R"({"ideal_network": true})"));
  const auto run = run_training(scenario);
  const double stage1 = static_cast<double>(run.report.stages[1].activation_peak);
  const double stage2 = static_cast<double>(run.report.stages[2].activation_peak);
  const double per_microbatch = stage1 - stage2;
  REQUIRE(per_microbatch > 0);
  CHECK(stage2 / per_microbatch >= 2.0);
  CHECK(stage2 / per_microbatch < 2.5);  // two in flight, not three
}

TEST_CASE("impossible plans are rejected with the reason", "[workload][errors]") {
  auto rejected = [&](const std::string& parallel, int gpus, int batch, const std::string& message,
                      const std::string& model = kSmallLlama, int seq_len = 2048) {
    CHECK_THROWS_WITH(scenario_from(small_plan(model, gpus, parallel, batch, seq_len)), Contains(message));
  };
  rejected(R"({"tp": 3, "dp": 1})", 3, 3, "parallel.tp: 3 does not divide attention heads 16");
  rejected(R"({"tp": 8, "dp": 1})", 8, 8, "parallel.tp: 8 does not divide KV groups 4");
  rejected(R"({"pp": 3, "dp": 1})", 3, 3, "parallel.pp: pp x vpp = 3 does not divide 8 layers");
  rejected(R"({"tp": 2, "pp": 2, "dp": 2})", 16, 16, "does not equal the cluster's 16 GPUs");
  rejected(R"({"tp": 2, "dp": 4})", 8, 6, "training.global_batch: 6 is not divisible by dp x micro_batch = 4");
  rejected(R"({"pp": 2, "dp": 1, "vpp": 2})", 2, 4, "parallel.vpp: vpp = 2 needs schedule 'interleaved'");
  rejected(R"({"pp": 2, "dp": 1, "vpp": 2, "schedule": "interleaved"})", 2, 3,
           "the interleaved schedule needs the 3 microbatches to be a multiple of pp = 2");
  rejected(R"({"pp": 2, "dp": 1, "stage_layers": [3, 4]})", 2, 2, "parallel.stage_layers: the entries add up to 7");
  rejected(R"({"cp": 2, "dp": 1})", 2, 2, "training.seq_len: 2050 is not divisible by 2 x cp = 4", kSmallLlama, 2050);
  rejected(R"({"tp": 2, "dp": 1, "schedule": "zb-h2"})", 2, 2, "parallel.schedule: 'zb-h2' is not one of");
  rejected(R"({"tp": 2, "dp": 1, "zero": 4})", 2, 2,
           "parallel.zero: expected 0 (no sharding), 1 (distributed optimizer), 2 (gradients sharded too) or 3");
  rejected(R"({"tp": 1, "dp": 1})", 1, 1, "training.seq_len: 4096 exceeds the model's 2048 positions", kSmallGpt, 4096);
  CHECK_THROWS_WITH(scenario_from(R"({"model": "llama9", "cluster": "dgx-h100", "parallel": {}, "training": {}})"),
                    Contains("model: unknown model 'llama9'"));
  CHECK_THROWS_WITH(scenario_from(R"({"model": "llama3-8b", "cluster": "dgx-h100", "parallel": {"tp": 8},
                                      "training": {"global_batch": 8}})"),
                    Equals("training: missing required field 'seq_len'"));
}

}  // namespace
}  // namespace weft
