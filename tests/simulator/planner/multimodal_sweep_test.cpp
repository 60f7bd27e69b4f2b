// Sweeps of models of several modules: the layouts, partitions and splits they enumerate, their
// memory lower bound, and their answers with and without reuse.

#include <set>

#include <catch2/catch.hpp>

#include "simulator/planner/memory_estimate.hpp"
#include "simulator/planner/plan_enumeration.hpp"
#include "simulator/planner/sweep.hpp"
#include "tests/simulator/planner/dip/dip_test_support.hpp"
#include "tests/simulator/workload/multimodal_test_support.hpp"

namespace weft {
namespace {

using Catch::Matchers::Contains;

// The small VLM of multimodal_test_support.hpp (vision 4 layers, projector, language 4 layers)
// for a sweep over 8 GPUs; samples of 256 tokens holding 2 images, or `data` packed into 2,048.
TrainingScenario vlm_base(bool vision_frozen = false, const std::string& data = "") {
  return test::sweep_scenario_from(fmt::format(
      R"({{"model": {}, "cluster": {{"base": "dgx-h100", "gpus": 8}},
           "training": {{"global_batch": 8, "seq_len": {}, "images": {}}}{}}})",
      test::vlm_model(vision_frozen, false), data.empty() ? 256 : 2048, data.empty() ? 2 : 0,
      data.empty() ? "" : ", \"data\": " + data));
}

std::vector<std::string> labels_of(const PlanEnumeration& plans) {
  std::vector<std::string> labels;
  for (const PlanCandidate& plan : plans.plans) labels.push_back(plan_label(plan.scenario));
  return labels;
}

TEST_CASE("a multimodal grid tries both layouts, both partitions and no context parallelism", "[sweep][modality]") {
  const SweepGrid grid = default_grid(vlm_base(), 8);
  CHECK(grid.cp == std::vector<int>{1});
  CHECK(grid.layout == std::vector<StageLayout>{StageLayout::shared, StageLayout::modality});
  CHECK(grid.partition == std::vector<StagePartition>{StagePartition::parameters, StagePartition::time});
  // Drawn samples give the training section's sample no images: nothing to time the vision with.
  const SweepGrid drawn = default_grid(vlm_base(false, test::kImageTextData), 8);
  CHECK(drawn.partition == std::vector<StagePartition>{StagePartition::parameters});
  const TrainingScenario dense = test::sweep_scenario_from(
      R"({"model": {"base": "llama3-8b", "layers": 4}, "cluster": {"base": "dgx-h100", "gpus": 8},
          "training": {"global_batch": 8, "seq_len": 4096}})");
  const SweepGrid dense_grid = default_grid(dense, 8);
  CHECK(dense_grid.layout == std::vector<StageLayout>{StageLayout::shared});
  CHECK(dense_grid.partition == std::vector<StagePartition>{StagePartition::even});
  SweepGrid modality = dense_grid;
  apply_grid_spec(modality, "layout=modality");
  CHECK_THROWS_WITH(enumerate_plans(dense, modality, 8), Contains("'layout=modality'") && Contains("several modules"));
}

TEST_CASE("grid specs read layouts, partitions and module splits, and explain bad ones", "[sweep][modality][errors]") {
  SweepGrid grid = default_grid(vlm_base(), 8);
  apply_grid_spec(grid, "layout=modality,shared partition=time,even module_stages=every");
  CHECK(grid.layout == std::vector<StageLayout>{StageLayout::modality, StageLayout::shared});
  CHECK(grid.partition == std::vector<StagePartition>{StagePartition::time, StagePartition::even});
  CHECK(grid.module_stages == ModuleStageSplits::every);
  SweepGrid read_back;
  apply_grid_spec(read_back, grid_spec(grid));
  CHECK(grid_spec(read_back) == grid_spec(grid));
  CHECK_THROWS_WITH(apply_grid_spec(grid, "layout=split"), Contains("'layout=split': expected shared or modality"));
  CHECK_THROWS_WITH(apply_grid_spec(grid, "partition=flops"),
                    Contains("'partition=flops': expected even, parameters or time"));
  CHECK_THROWS_WITH(apply_grid_spec(grid, "module_stages=balanced,every"),
                    Contains("'module_stages=balanced,every': expected one of balanced or every"));
}

TEST_CASE("a multimodal enumeration counts its layouts as computed by hand", "[sweep][modality]") {
  const TrainingScenario base = vlm_base();
  SweepGrid grid = default_grid(base, 8);
  apply_grid_spec(grid, "tp=1 pp=1,2,4 vpp=1,2 mb=1 recompute=none zero=0 schedule=1f1b,interleaved,encoder-first");
  const PlanEnumeration plans = enumerate_plans(base, grid, 8);
  // pp 1: 1f1b shared (one stage: one partition); interleaved shared x 2 partitions (invalid:
  // pp < 2); encoder-first shared (its own partition). Modality needs a stage per module.
  // pp 2 and pp 4 each: 1f1b shared x 2 and modality x 2 (one balanced split per partition);
  // interleaved shared x 2; encoder-first 1.
  CHECK(plans.plans.size() == 4 + 7 + 7);
  CHECK(plans.invalid_by_reason.at("interleaved needs pp >= 2") == 2);
  const std::vector<std::string> labels = labels_of(plans);
  CHECK(std::set<std::string>(labels.begin(), labels.end()).size() == labels.size());
  CHECK(std::count(labels.begin(), labels.end(),
                   "tp1 cp1 pp2 dp4 vpp1 mb1 zero0 1f1b recompute=none modality=vision:1,language:1 "
                   "partition=time") == 1);
  CHECK(std::count(labels.begin(), labels.end(),
                   "tp1 cp1 pp4 dp2 vpp2 mb1 zero0 encoder-first recompute=none shared partition=modules") == 1);
  CHECK(std::count(labels.begin(), labels.end(), "tp1 cp1 pp1 dp8 vpp1 mb1 zero0 1f1b recompute=none shared") == 1);

  // Every split: pp 4 splits as vision 1, 2 or 3 and language the rest, per partition.
  apply_grid_spec(grid, "module_stages=every");
  CHECK(enumerate_plans(base, grid, 8).plans.size() == 4 + 7 + 7 + 4);
}

TEST_CASE("an even partition of modules on stages of their own takes the best balanced split by layers",
          "[sweep][modality]") {
  const TrainingScenario base = vlm_base();
  SweepGrid grid = default_grid(base, 8);
  apply_grid_spec(grid, "tp=1 pp=4 mb=1 recompute=none zero=0 schedule=1f1b layout=modality partition=even");
  const PlanEnumeration plans = enumerate_plans(base, grid, 8);
  REQUIRE(plans.plans.size() == 1);
  // Four layers each: vision 1 + language 3 puts 4 layers on a stage, 2 + 2 puts 2, 3 + 1 puts 4.
  const TrainingScenario& plan = plans.plans.front().scenario;
  CHECK(plan.parallel.modality_stages == std::vector<int>{2, 0, 2});
  CHECK(plan.parallel.stage_layers == std::vector<int>{2, 2, 2, 2});
  CHECK(plans.plans.front().valid());
}

// Simulates every valid plan of `grid` and checks that no stage peaks below its estimate, which
// shared layer steps do not change.
int check_memory_lower_bound(const TrainingScenario& base, const SweepGrid& grid) {
  int checked = 0;
  for (const PlanCandidate& candidate : enumerate_plans(base, grid, 8).plans) {
    if (!candidate.valid()) continue;
    const std::vector<Bytes> estimate = estimate_stage_memory(candidate.scenario);
    const PipelineLayerSteps layers =
        pipeline_layer_steps(candidate.scenario, candidate.scenario.model.tied_embeddings());
    const auto run = test::run_training(candidate.scenario);
    INFO(plan_label(candidate.scenario));
    CHECK(estimate_stage_memory(candidate.scenario, &layers) == estimate);  // the sweep's shared steps
    REQUIRE(estimate.size() == run.report.stages.size());
    for (std::size_t s = 0; s < estimate.size(); ++s) CHECK(estimate[s] <= run.report.stages[s].peak_memory);
    ++checked;
  }
  return checked;
}

TEST_CASE("the memory estimate of multimodal plans is a lower bound of the simulated peak",
          "[sweep][modality][memory][exhaustive]") {
  SweepGrid grid = default_grid(vlm_base(), 8);
  apply_grid_spec(grid,
                  "tp=1,2 pp=1,2,4 mb=1,2 recompute=none,full,selective zero=0,1,3 "
                  "schedule=gpipe,1f1b,interleaved,encoder-first vpp=1,2");
  CHECK(check_memory_lower_bound(vlm_base(), grid) > 200);
  CHECK(check_memory_lower_bound(vlm_base(true), grid) > 200);
  apply_grid_spec(grid, "mb=1 zero=0,1");
  CHECK(check_memory_lower_bound(vlm_base(false, test::kImageTextData), grid) > 30);
}

// Sweeps every plan of `grid` and checks that each simulated plan has a bound and takes at least
// it; returns how many were checked.
int check_iteration_bound(const TrainingScenario& base, const std::string& grid_spec_text) {
  SweepGrid grid = default_grid(base, 8);
  apply_grid_spec(grid, grid_spec_text);
  SweepOptions options;
  options.threads = 2;
  const SweepResult sweep = run_sweep(base, grid, 8, options);
  int checked = 0;
  for (const PlanOutcome& plan : sweep.plans) {
    if (!plan.simulated()) continue;
    INFO(plan.label);
    REQUIRE(plan.iteration_bound.has_value());
    CHECK(static_cast<double>(*plan.iteration_bound) / kNsPerSecond <= plan.report->iteration_time_s);
    ++checked;
  }
  return checked;
}

TEST_CASE("per-op checkpointing of multimodal plans keeps their memory estimates and bounds below the simulation",
          "[sweep][modality][recompute]") {
  const std::string grid =
      "tp=1,2 pp=1,2,4 mb=1,2 recompute=selective zero=0,1 vpp=1,2 "
      "schedule=1f1b,interleaved,encoder-first";
  for (const bool frozen : {false, true}) {
    INFO("vision frozen " << frozen);
    TrainingScenario base = vlm_base(frozen);
    base.stack.selective_recompute = SelectiveRecompute::per_op;
    SweepGrid memory_grid = default_grid(base, 8);
    apply_grid_spec(memory_grid, grid);
    CHECK(check_memory_lower_bound(base, memory_grid) > 30);
    CHECK(check_iteration_bound(base, grid) > 30);
  }
}

TEST_CASE("no multimodal plan is simulated faster than its bound, shared or on stages per module",
          "[sweep][bound][exhaustive]") {
  const std::string grid =
      "tp=1,2 pp=1,2,4 mb=1,2 zero=0,1 recompute=none,full,selective vpp=1,2 "
      "schedule=gpipe,1f1b,interleaved,zb-h1,encoder-first module_stages=every";
  CHECK(check_iteration_bound(vlm_base(), grid) > 300);
  CHECK(check_iteration_bound(vlm_base(true), grid) > 300);  // a frozen encoder sends no gradient back
  // Only the projector trains: the vision layers have no backward pass, and are not recomputed
  // (a wide vision encoder makes its stages the slowest).
  const TrainingScenario projector_only = test::sweep_scenario_from(fmt::format(
      R"({{"model": {{"name": "vlm", "modules": [
            {{"name": "vision", "model": {{"base": "vit-5b", "layers": 4, "hidden": 2048, "ffn_hidden": 8192,
              "heads": 16, "patch_input": 48}}, "tokens": "images", "tokens_per_image": 256, "frozen": true}},
            {{"name": "projector", "projector": {{"ffn_hidden": 512}}}},
            {{"name": "language", "model": {}, "frozen": true}}]}},
          "cluster": {{"base": "dgx-h100", "gpus": 8}},
          "training": {{"global_batch": 8, "seq_len": 1024, "images": 2}}}})",
      test::kLanguageSpec));
  CHECK(check_iteration_bound(projector_only, grid + " recompute=full") > 100);
  // Two encoders side by side: the stages form a tree.
  const TrainingScenario valm = test::sweep_scenario_from(fmt::format(
      R"({{"model": {}, "cluster": {{"base": "dgx-h100", "gpus": 8}},
           "training": {{"global_batch": 8, "seq_len": 256, "images": 2, "audio_seconds": 2}}}})",
      test::kTwoEncoderModel));
  CHECK(check_iteration_bound(valm, grid + " pp=4,8 layout=modality") > 20);
}

// Sweeps `base` with reuse on 2 threads and every op on 1: the same plans, numbers and memory.
// A frozen vision encoder ahead of the trained modules leaves stages of vision layers alone
// without a backward pass, and some GPipe plans are then simulated on their own.
void check_reuse(const TrainingScenario& base, bool some_not_resumed) {
  SweepGrid grid = default_grid(base, 8);
  apply_grid_spec(grid,
                  "tp=1,2 pp=1,2,4 mb=1 zero=0,1 recompute=none schedule=gpipe,1f1b,encoder-first partition=even");
  SweepOptions reused;
  reused.threads = 2;
  SweepOptions built = reused;
  built.reuse = false;
  built.threads = 1;
  const SweepResult a = run_sweep(base, grid, 8, reused);
  const SweepResult b = run_sweep(base, grid, 8, built);
  REQUIRE(a.plans.size() == b.plans.size());
  CHECK(a.feasible > 20);
  CHECK(a.resumed > 0);  // GPipe plans of a shared pipeline resumed from their 1F1B plan's checkpoint
  CHECK(b.resumed == 0);
  for (std::size_t i = 0; i < a.plans.size(); ++i) {
    INFO(a.plans[i].label);
    CHECK(a.plans[i].label == b.plans[i].label);
    CHECK(a.plans[i].status == b.plans[i].status);
    CHECK(a.plans[i].stage_memory == b.plans[i].stage_memory);
    if (a.plans[i].simulated()) CHECK(a.plans[i].report->iteration_time_s == b.plans[i].report->iteration_time_s);
  }
  std::int64_t gpipe = 0;
  for (const PlanOutcome& plan : a.plans) {
    const ParallelPlan& p = plan.scenario.parallel;
    if (plan.simulated() && p.schedule == PipelineSchedule::gpipe && p.modality_stages.empty()) ++gpipe;
  }
  CHECK((a.resumed < gpipe) == some_not_resumed);
}

TEST_CASE("a multimodal sweep gives the same answers with and without reuse, on any thread count",
          "[sweep][modality]") {
  for (const bool frozen_vision : {false, true}) {
    for (const std::string& data : {std::string(), test::kImageTextData}) {
      if (frozen_vision && !data.empty()) continue;
      check_reuse(vlm_base(frozen_vision, data), frozen_vision);
    }
  }
}

}  // namespace
}  // namespace weft
