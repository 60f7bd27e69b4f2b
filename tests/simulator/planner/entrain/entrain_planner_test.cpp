#include "simulator/planner/entrain/entrain_planner.hpp"

#include <algorithm>
#include <numeric>

#include <catch2/catch.hpp>

#include "simulator/core/input_error.hpp"
#include "simulator/planner/dip/dip_planner.hpp"
#include "simulator/planner/entrain/entrain_schedule.hpp"
#include "tests/simulator/planner/dip/dip_test_support.hpp"

namespace weft::entrain {
namespace {

// The small VLM with its modules on stages of their own, 2 replicas, 2 samples packed a microbatch
// (a context long enough to hold any two) from the tiled image dataset.
std::string small_entrain_scenario() {
  std::string text = test::with_two_replicas(
      test::small_vlm_scenario(R"({"dataset": "tiled-image-qa", "seed": 3, "pack": true, "max_samples": 2})",
                               R"(, "modality_stages": {"vision": 1, "language": 1})", false, 8));
  const std::string context = R"("seq_len": 2048)";
  return text.replace(text.find(context), context.size(), R"("seq_len": 16384)");
}

TEST_CASE("samples in order on the scenario's layout take each replica the time weft plan's baseline does",
          "[entrain][planner]") {
  const TrainingScenario scenario = test::load_scenario_text(small_entrain_scenario());
  dip::DipOptions options;
  options.max_iterations = 1;
  options.threads = 1;
  const dip::DipPlan plan = dip::plan_dip(scenario, options);
  REQUIRE(plan.replicas.size() == 2);

  // The same batch through Entrain's stage model: 16 samples, 8 a replica, 2 a microbatch.
  const MultimodalModel model(scenario.model);
  dip::LayerCosts costs(model, scenario.shard_context(), scenario.cluster, false, scenario.parallel.dp);
  const std::vector<SampleShape> samples =
      draw_sample_shapes(*scenario.data, 0, 16, 16384, scenario.model.sequence_tokens());
  const ComponentPipeline pipeline{{4}, {4}};
  REQUIRE(scenario.layers_per_virtual_stage() == std::vector<int>{4, 4});
  for (int r = 0; r < 2; ++r) {
    std::vector<SampleSet> batches;
    for (std::size_t s = 8 * static_cast<std::size_t>(r); s < 8 * static_cast<std::size_t>(r) + 8; s += 2)
      batches.push_back({s, s + 1});
    const ReplicaTimeline timeline =
        time_replica(costs, dip::LayerPolicy::keep, samples, pipeline, batches, batches, 128, PipelineRun{});
    CHECK(timeline.schedule.makespan == plan.replicas[static_cast<std::size_t>(r)].baseline);
  }
}

TEST_CASE("Entrain's plan of the small VLM: b_min, the allocation and the runs", "[entrain][planner]") {
  const TrainingScenario scenario = test::load_scenario_text(small_entrain_scenario());
  EntrainOptions options;
  options.trial_sizes = {1, 64};
  options.dip_iterations = 1;
  const EntrainReport report = plan_entrain(scenario, options);
  CHECK(report.global_batch == 16);
  CHECK(report.micro_batch == 2);
  // Algorithm 2: n0 = 1 doubled until a round is stable; only the last is.
  REQUIRE_FALSE(report.profiling.rounds.empty());
  CHECK(report.profiling.batch == std::int64_t{1} << (report.profiling.rounds.size() - 1));
  CHECK(report.profiling.rounds.back().stable);
  CHECK(report.profiling.rounds.back().trials == 59);
  for (std::size_t i = 0; i + 1 < report.profiling.rounds.size(); ++i) CHECK_FALSE(report.profiling.rounds[i].stable);
  // A replica's 2 stage groups: one for each component, whatever their work.
  CHECK(report.entrain.allocation == std::vector<int>{1, 1});
  CHECK(report.entrain.encoder.layers == std::vector<int>{4});
  CHECK(report.entrain.llm.layers == std::vector<int>{4});
  // Eq. 4.2 from the layout's own stage costs.
  CHECK(report.entrain.iteration_s ==
        Approx(report.entrain.encoder.stage_cost[0] + report.entrain.llm.stage_cost[0] +
               (report.entrain.microbatches - 1) *
                   std::max(report.entrain.encoder.bottleneck, report.entrain.llm.bottleneck)));
  REQUIRE(report.runs.size() >= 7);
  for (const EntrainRun& run : report.runs) {
    CHECK(run.iteration > 0);
    CHECK(run.samples_per_s == Approx(16.0 / (static_cast<double>(run.iteration) / kNsPerSecond)));
  }
  CHECK(report.runs.back().name == "+ eager forward (Entrain)");
  // Fig. 4.15 at 2 stage groups: the one split, which is Algorithm 3's, run as Entrain's last row.
  REQUIRE(report.sensitivity.size() == 1);
  CHECK(report.sensitivity[0].layout.allocation == std::vector<int>{1, 1});
  CHECK(report.sensitivity[0].iteration == report.runs.back().iteration);
}

TEST_CASE("Entrain refuses what it does not plan", "[entrain][planner]") {
  EntrainOptions options;
  options.dip_iterations = 1;
  auto refuses = [&](const std::string& text, const std::string& message) {
    const TrainingScenario scenario = test::load_scenario_text(text);
    CHECK_THROWS_WITH(plan_entrain(scenario, options), Catch::Matchers::Contains(message));
  };
  std::string unpacked = small_entrain_scenario();
  const std::string pack = R"("pack": true, "max_samples": 2)";
  refuses(unpacked.replace(unpacked.find(pack), pack.size(), R"("pack": false)"), "data.pack");
  refuses(test::small_vlm_scenario(""), "data:");
  refuses(R"({"model": "llama3-8b", "cluster": {"base": "h800-testbed", "gpus": 8}, "parallel": {"tp": 8},
              "training": {"global_batch": 8, "seq_len": 2048},
              "data": {"dataset": "web-text-mix", "pack": true, "max_samples": 2}})",
          "model:");
}

}  // namespace
}  // namespace weft::entrain
