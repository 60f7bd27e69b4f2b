// Sweeps of modules on meshes of their own (the grid's module_tp and module_dp axes).

#include <algorithm>

#include <catch2/catch.hpp>

#include "simulator/planner/mesh_plans.hpp"
#include "simulator/planner/sweep.hpp"
#include "tests/simulator/workload/multimodal_test_support.hpp"
#include "tests/simulator/workload/training_test_support.hpp"

namespace weft {
namespace {

using Catch::Matchers::Contains;

// The small VLM of multimodal_test_support.hpp on 8 H100s: samples of 256 tokens holding 2 images.
TrainingScenario small_vlm() {
  return test::sweep_scenario_from(fmt::format(R"({{"model": {}, "cluster": {{"base": "dgx-h100", "gpus": 8}},
                                                  "training": {{"global_batch": 8, "seq_len": 256, "images": 2}}}})",
                                               test::vlm_model(false, false)));
}

// Its grid at TP2 PP2 on 8 GPUs, modality parallelism partitioned by parameters, and `meshes`.
SweepGrid mesh_grid(const TrainingScenario& base, const std::string& meshes) {
  SweepGrid grid = default_grid(base, 8);
  apply_grid_spec(grid,
                  "tp=2 pp=2 mb=1 recompute=none zero=0 schedule=1f1b sp=0 layout=modality "
                  "partition=parameters " +
                      meshes);
  return grid;
}

const PlanCandidate* find_plan(const PlanEnumeration& plans, const std::string& label) {
  const auto it = std::find_if(plans.plans.begin(), plans.plans.end(),
                               [&](const PlanCandidate& plan) { return plan_label(plan.scenario) == label; });
  return it == plans.plans.end() ? nullptr : &*it;
}

TEST_CASE("grid specs read module meshes and explain bad ones", "[sweep][meshes][errors]") {
  SweepGrid grid = default_grid(small_vlm(), 8);
  CHECK_FALSE(grid.tries_meshes());
  apply_grid_spec(grid, "module_tp=1,2 module_dp=2..4");
  CHECK(grid.module_tp == std::vector<int>{1, 2});
  CHECK(grid.module_dp == std::vector<int>{2, 3, 4});
  SweepGrid read_back;
  apply_grid_spec(read_back, grid_spec(grid));
  CHECK(read_back.module_tp == grid.module_tp);
  CHECK(read_back.module_dp == grid.module_dp);
  CHECK_THROWS_WITH(apply_grid_spec(grid, "module_dp=0"), Contains("'module_dp=0': expected values of at least 1"));
  apply_grid_spec(grid, "layout=shared");
  CHECK_THROWS_WITH(
      enumerate_plans(small_vlm(), grid, 8),
      Contains("'module_tp': modules on meshes of their own have stages of their own; add layout=modality"));
}

TEST_CASE("module meshes share out the GPUs as computed by hand", "[sweep][meshes]") {
  // TP2 PP2 on 8 GPUs, the vision encoder on stage 0 and the language model on stage 1; the
  // uniform plan has dp 2. With the encoder at (module_tp, module_dp), the language model's dp is
  // (8 - module_tp x module_dp) / (1 stage x tp 2):
  //   (1, 1): 7 / 2, no;  (1, 2): 3, which does not divide the batch of 8;  (1, 4): 2;
  //   (2, 1): 3 again;    (2, 2): 2, the uniform plan, not repeated;        (2, 4): nothing left.
  const TrainingScenario base = small_vlm();
  const SweepGrid grid = mesh_grid(base, "module_tp=1,2 module_dp=1,2,4");
  const PlanEnumeration plans = enumerate_plans(base, grid, 8);
  CHECK(plans.plans.size() == 1 + 5);
  CHECK(plans.invalid_by_reason.at("the modules' meshes do not share out the GPU count") == 2);
  CHECK(plans.invalid_by_reason.at("global batch not divisible by dp x micro batch") == 2);
  CHECK(plans.valid == 2);
  const PlanCandidate* uniform =
      find_plan(plans,
                "tp2 cp1 pp2 dp2 vpp1 mb1 zero0 1f1b recompute=none modality=vision:1,language:1 "
                "partition=parameters");
  REQUIRE(uniform != nullptr);
  CHECK_FALSE(uniform->scenario.parallel.per_module_meshes());
  const PlanCandidate* meshed =
      find_plan(plans,
                "tp2 cp1 pp2 dp2 vpp1 mb1 zero0 1f1b recompute=none modality=vision:1/tp1/dp4,language:1 "
                "partition=parameters");
  REQUIRE(meshed != nullptr);
  REQUIRE(meshed->valid());
  // vision, projector (its reader's), language.
  CHECK(meshed->scenario.parallel.module_meshes == std::vector<PositionMesh>{{1, 4}, {1, 4}, {2, 2}});
  CHECK(meshed->scenario.parallel.world_size() == 8);

  // Without module_dp every module keeps the language model's dp: 8 / (1 x 1 + 1 x 2) is no whole
  // number at module_tp 1, and module_tp 2 is the uniform plan.
  const SweepGrid same_dp = mesh_grid(base, "module_tp=1,2");
  const PlanEnumeration kept = enumerate_plans(base, same_dp, 8);
  CHECK(kept.plans.size() == 2);
  CHECK(kept.invalid_by_reason.at("the modules' meshes do not share out the GPU count") == 1);
}

TEST_CASE("each encoder takes every mesh of the grid, apart from the others", "[sweep][meshes]") {
  // Vision and audio encoders on a stage each, the language model on one at TP2 on 8 GPUs (no
  // uniform plan: 2 x 3 does not divide 8). With vision at (tv, dv) and audio at (ta, da), the
  // language model's dp is (8 - tv dv - ta da) / 2, a whole number above 0 for 9 of the 16 pairs
  // of (1, 1), (1, 2), (2, 1), (2, 2); (1, 1) with (1, 1) leaves dp 3, which does not divide the
  // batch of 8.
  const TrainingScenario base =
      test::sweep_scenario_from(fmt::format(R"({{"model": {}, "cluster": {{"base": "dgx-h100", "gpus": 8}},
                      "training": {{"global_batch": 8, "seq_len": 256, "images": 2, "audio_seconds": 4}}}})",
                                            test::kTwoEncoderModel));
  SweepGrid grid = default_grid(base, 8);
  apply_grid_spec(grid,
                  "tp=2 pp=3 mb=1 recompute=none zero=0 schedule=1f1b sp=0 layout=modality partition=parameters "
                  "module_tp=1,2 module_dp=1,2");
  const PlanEnumeration plans = enumerate_plans(base, grid, 8);
  CHECK(plans.plans.size() == 1 + 16);
  CHECK(plans.invalid_by_reason.at("the modules' meshes do not share out the GPU count") == 7);
  CHECK(plans.invalid_by_reason.at("global batch not divisible by dp x micro batch") == 1);
  const PlanCandidate* apart =
      find_plan(plans,
                "tp2 cp1 pp3 dp1 vpp1 mb1 zero0 1f1b recompute=none modality=vision:1/tp1/dp2,audio:1/tp2/dp2,"
                "language:1 partition=parameters");
  REQUIRE(apart != nullptr);
  // vision, its projector, audio, its projector, language: 2 + 4 + 2 GPUs.
  CHECK(apart->scenario.parallel.module_meshes == std::vector<PositionMesh>{{1, 2}, {1, 2}, {2, 2}, {2, 2}, {2, 1}});
  CHECK(apart->scenario.parallel.world_size() == 8);
}

TEST_CASE("a sweep simulates every mesh plan, unbounded and unestimated, and ranks it", "[sweep][meshes]") {
  const TrainingScenario base = small_vlm();
  const SweepGrid grid = mesh_grid(base, "module_tp=1 module_dp=4");
  const SweepResult result = run_sweep(base, grid, 8, {});
  REQUIRE(result.plans.size() == 2);
  for (const PlanOutcome& plan : result.plans) {
    INFO(plan.label);
    CHECK(plan.status == PlanStatus::ok);
    // The mesh plan has no bound (it prices stages at the plan's tp and dp): it is always simulated.
    CHECK(plan.iteration_bound.has_value() == !plan.scenario.parallel.per_module_meshes());
    // Its simulation is weft simulate's of the same plan.
    const test::TrainingRun alone = test::run_training(plan.scenario);
    CHECK(plan.report->iteration_time_s == alone.report.iteration_time_s);
  }
}

TEST_CASE("on per-sample data a sweep simulates an image encoder's mesh of another DP", "[sweep][meshes][data]") {
  // The small VLM's language replicas each draw their own samples of the tiled image dataset; the
  // encoder at TP1 DP4 deals each slot's images over its 4 replicas, as weft simulate runs it.
  const TrainingScenario base =
      test::sweep_scenario_from(fmt::format(R"({{"model": {}, "cluster": {{"base": "dgx-h100", "gpus": 8}},
                      "training": {{"global_batch": 8, "seq_len": 512}},
                      "data": {{"dataset": "tiled-image-qa", "seed": 3, "pad_to": 128}}}})",
                                            test::vlm_model(false, false)));
  const SweepResult result = run_sweep(base, mesh_grid(base, "module_tp=1 module_dp=4"), 8, {});
  REQUIRE(result.plans.size() == 2);
  const auto meshed = std::find_if(result.plans.begin(), result.plans.end(),
                                   [](const PlanOutcome& plan) { return plan.scenario.parallel.per_module_meshes(); });
  REQUIRE(meshed != result.plans.end());
  CHECK(meshed->status == PlanStatus::ok);
  CHECK(meshed->scenario.parallel.mesh_at(0) == PositionMesh{.tp = 1, .dp = 4});
  const test::TrainingRun alone = test::run_training(meshed->scenario);
  CHECK(alone.workload.ranks.size() == 4 + 2);  // every replica of each mesh
  CHECK(meshed->report->iteration_time_s == alone.report.iteration_time_s);
}

}  // namespace
}  // namespace weft
