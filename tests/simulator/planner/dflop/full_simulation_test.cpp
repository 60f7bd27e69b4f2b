// A DFLOP layout in weft's full simulation (full_simulation.hpp), against the same layout written
// out as a scenario of modules on meshes of their own.
#include "simulator/planner/dflop/full_simulation.hpp"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "simulator/engine/engine.hpp"
#include "simulator/workload/training_report.hpp"
#include "simulator/workload/training_workload.hpp"
#include "tests/simulator/planner/dflop/dflop_test_support.hpp"

namespace weft::dflop {
namespace {

using Catch::Matchers::Contains;
using test::plan_of;

DatasetProfile mean_shape(double images, double tokens) {
  DatasetProfile data;
  data.mean_images = images;
  data.mean_tokens = tokens;
  return data;
}

TEST_CASE("a layout runs op by op as the same layout written out as a scenario", "[dflop][meshes]") {
  const TrainingScenario base = test::load_scenario_text(test::small_dflop_scenario());
  ModelCosts costs(base);
  // The encoder at TP1 DP4 on 4 GPUs, the LLM at TP2 DP2 on 4; 3 slots of 2 buckets hold the 16
  // samples at 3 a bucket: 18 samples of 3 images (2.6 rounded) and 1,024 tokens (900 padded to 128).
  const FullSimulation full = simulate_layout(base, costs, "test", plan_of({1, 1, 4}, {2, 1, 2}, 3), {{4}, {4}},
                                              mean_shape(2.6, 900.0), 16, 128);
  CHECK(full.samples == 18);
  CHECK(full.sample.images == 3);
  CHECK(full.sample.seq_len == 1024);
  REQUIRE(full.iteration_s.has_value());
  CHECK(full.refused.empty());

  nlohmann::json text = nlohmann::json::parse(test::small_dflop_scenario());
  text.erase("data");
  text["parallel"] = nlohmann::json::parse(R"({"tp": 2, "pp": 2, "dp": 2, "stage_layers": [4, 4],
      "modality_stages": {"vision": 1, "language": 1}, "modules": {"vision": {"tp": 1, "dp": 4}}})");
  text["training"] = nlohmann::json::parse(R"({"global_batch": 18, "micro_batch": 3, "seq_len": 1024, "images": 3})");
  const TrainingScenario written = test::load_scenario_text(text.dump());
  TrainingWorkload workload = build_training_workload(written, {});
  const SimulationResult result = simulate(workload.graph, *workload.cost_model, {});
  const TrainingReport report = make_training_report(written, workload, result);
  CHECK(*full.iteration_s == report.iteration_time_s);
  CHECK(full.samples_per_s == report.samples_per_s);
  // The stage model times the same samples (the two agree within 5% at the bundled scenarios'
  // scale, weft_dflop_test.cpp; on this 0.1 s iteration the optimizer step, which it leaves out,
  // and the exposed gradient reduction make the full simulation 18% longer).
  CHECK(full.stage_model_s > 0.0);
}

TEST_CASE("a layout the simulation cannot hold is timed on the stage model alone, with the reason", "[dflop][meshes]") {
  const TrainingScenario base = test::load_scenario_text(test::small_dflop_scenario());
  ModelCosts costs(base);
  // One sample of one image a bucket: a slot's 2 images cannot feed 4 encoder replicas.
  const FullSimulation full = simulate_layout(base, costs, "test", plan_of({1, 1, 4}, {2, 1, 2}, 3), {{4}, {4}},
                                              mean_shape(1.0, 300.0), 6, 128);
  CHECK_FALSE(full.iteration_s.has_value());
  CHECK_THAT(full.refused, Contains("parallel.modules.vision.dp: 4 replicas for the 2 images of a slot"));
  CHECK(full.stage_model_s > 0.0);
}

}  // namespace
}  // namespace weft::dflop
