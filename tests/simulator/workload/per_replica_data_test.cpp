// Training iterations with per-sample data: every DP replica simulated with its own microbatches.
#include <fmt/format.h>
#include <catch2/catch.hpp>

#include "simulator/workload/training_workload.hpp"
#include "tests/simulator/workload/training_test_support.hpp"
#include "tests/support/run_command.hpp"

namespace weft {
namespace {

using Catch::Matchers::Contains;
using test::kSmallLlama;
using test::run_training;
using test::scenario_from;

std::string plan_with_data(const std::string& parallel, int global_batch, int seq_len, const std::string& data) {
  return fmt::format(R"({{"model": {}, "cluster": {{"base": "dgx-h100", "gpus": 8}}, "parallel": {},
                         "training": {{"global_batch": {}, "seq_len": {}}}{}}})",
                     kSmallLlama, parallel, global_batch, seq_len, data.empty() ? "" : ", \"data\": " + data);
}

const std::vector<std::string> kPlans = {
    R"({"tp": 2, "pp": 2, "dp": 2, "sequence_parallel": true, "zero": 1})",
    R"({"tp": 1, "cp": 2, "pp": 2, "dp": 2})",
    R"({"tp": 2, "pp": 2, "dp": 2, "vpp": 2, "schedule": "interleaved"})",
    R"({"tp": 2, "pp": 2, "dp": 2, "schedule": "zb-h1", "recompute": "full"})",
    R"({"tp": 1, "pp": 4, "dp": 2, "recompute": "selective", "schedule": "gpipe"})",
};

// A samples file where replica r's samples (global batch split in DP order) all have
// tokens[r] tokens.
std::string samples_file(const test::TempDir& dir, const std::vector<int>& tokens, int samples_per_replica) {
  std::string text;
  for (int t : tokens) {
    for (int i = 0; i < samples_per_replica; ++i) text += fmt::format("{{\"text_tokens\": {}}}\n", t);
  }
  return dir.write("samples.jsonl", text).string();
}

TEST_CASE("replicas fed samples of seq_len tokens give the uniform iteration", "[workload][data]") {
  const std::string every_sample_full =
      R"({"dataset": {"mixture": [{"text_tokens": {"distribution": "fixed", "value": 2048}}]}})";
  for (const std::string& parallel : kPlans) {
    INFO(parallel);
    const TrainingScenario uniform = scenario_from(plan_with_data(parallel, 16, 2048, ""));
    const TrainingScenario data = scenario_from(plan_with_data(parallel, 16, 2048, every_sample_full));
    const auto folded = run_training(uniform);
    const auto replicas = run_training(data);
    CHECK(replicas.workload.per_replica);
    CHECK(replicas.workload.ranks.size() == static_cast<std::size_t>(data.parallel.pp * data.parallel.dp));
    CHECK(replicas.result.makespan == folded.result.makespan);
    CHECK(replicas.report.model_flops_per_iteration == Approx(folded.report.model_flops_per_iteration));
    REQUIRE(replicas.report.stages.size() == folded.report.stages.size());
    for (std::size_t s = 0; s < folded.report.stages.size(); ++s) {
      CHECK(replicas.report.stages[s].peak_memory == folded.report.stages[s].peak_memory);
    }
  }
}

TEST_CASE("the replica with the longest samples sets the pace", "[workload][data]") {
  // The gradient collectives wait for every replica, so a faster replica waits for the slower;
  // the iteration is the uniform one at the slower replica's length, whichever replica it is.
  const test::TempDir dir;
  for (const std::string& parallel : kPlans) {
    for (const std::vector<int>& tokens : {std::vector<int>{1024, 2048}, std::vector<int>{2048, 1024}}) {
      INFO(parallel << " replica lengths " << tokens[0] << ", " << tokens[1]);
      const std::string data = fmt::format(R"({{"samples": "{}"}})", samples_file(dir, tokens, 8));
      const auto mixed = run_training(scenario_from(plan_with_data(parallel, 16, 2048, data)));
      const auto slow = run_training(scenario_from(plan_with_data(parallel, 16, 2048, "")));
      const auto fast = run_training(scenario_from(plan_with_data(parallel, 16, 1024, "")));
      CHECK(mixed.result.makespan == slow.result.makespan);
      CHECK(fast.result.makespan < slow.result.makespan);
      // Model FLOPs: each uniform run counts both replicas at its length.
      CHECK(mixed.report.model_flops_per_iteration ==
            Approx((slow.report.model_flops_per_iteration + fast.report.model_flops_per_iteration) / 2));
      // The short replica's ranks hold less activation memory at their peak.
      const std::size_t short_replica = tokens[0] < tokens[1] ? 0 : 1;
      for (const SimulatedRank& rank : mixed.workload.ranks) {
        const Bytes peak = mixed.result.devices[rank.device.value()].peak_memory;
        const Bytes uniform_peak = (rank.coordinates.dp == static_cast<int>(short_replica) ? fast : slow)
                                       .report.stages[static_cast<std::size_t>(rank.coordinates.pp)]
                                       .peak_memory;
        CHECK(peak == uniform_peak);
      }
      CHECK(mixed.report.data->sample_tokens == 8 * (1024 + 2048));
      CHECK(mixed.report.tokens_per_s == Approx(8.0 * (1024 + 2048) / mixed.report.iteration_time_s));
    }
  }
}

TEST_CASE("per-replica passes as composites give the answer of every op in the graph", "[workload][data][reuse]") {
  const std::string drawn = R"({"dataset": "web-text-mix", "seed": 5, "pad_to": 256})";
  for (const std::string& parallel : kPlans) {
    INFO(parallel);
    const TrainingScenario scenario = scenario_from(plan_with_data(parallel, 16, 4096, drawn));
    REQUIRE(scenario.microbatch_shapes()->distinct().size() > 2);
    const auto composed = run_training(scenario, {.composites = true});
    const auto expanded = run_training(scenario, {.composites = false});
    CHECK(composed.result.reused_subgraphs);
    REQUIRE(composed.result.makespan == expanded.result.makespan);
    REQUIRE(composed.result.devices.size() == expanded.result.devices.size());
    for (std::size_t d = 0; d < expanded.result.devices.size(); ++d) {
      CHECK(composed.result.devices[d].peak_memory == expanded.result.devices[d].peak_memory);
      CHECK(composed.result.devices[d].busy_ns == expanded.result.devices[d].busy_ns);
    }
  }
}

TEST_CASE("per-sample data errors name the field", "[workload][data][errors]") {
  const std::string parallel = R"({"tp": 2, "cp": 2, "pp": 2, "dp": 1, "sequence_parallel": true})";
  CHECK_THROWS_WITH(scenario_from(plan_with_data(parallel, 4, 2048, R"({"dataset": "web-text-mix", "pad_to": 100})")),
                    Contains("data.pad_to") && Contains("does not divide training.seq_len 2048"));
  CHECK_THROWS_WITH(scenario_from(plan_with_data(parallel, 4, 2048, R"({"dataset": "web-text-mix", "pad_to": 2})")),
                    Contains("data.pad_to") && Contains("2 x cp = 4"));
  const test::TempDir dir;
  const std::string few = fmt::format(R"({{"samples": "{}"}})", samples_file(dir, {512}, 3));
  CHECK_THROWS_WITH(scenario_from(plan_with_data(parallel, 4, 2048, few)),
                    Contains("data.samples") && Contains("holds 3 samples; the global batch takes 4"));
  const TrainingScenario scenario =
      scenario_from(plan_with_data(R"({"tp": 2, "pp": 2, "dp": 2})", 8, 2048, R"({"dataset": "web-text-mix"})"));
  CHECK_THROWS_WITH(build_training_workload(scenario, {.unfold = true}), Contains("--unfold"));
  const JsonDocument sweep =
      JsonDocument::parse_text(plan_with_data("{}", 8, 2048, R"({"dataset": "web-text-mix"})"), "sweep.json");
  CHECK(load_sweep_scenario(sweep.root()).data.has_value());  // a sweep keeps the per-sample data
}

}  // namespace
}  // namespace weft
