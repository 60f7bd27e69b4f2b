#include "simulator/planner/dflop/dflop_planner.hpp"

#include <catch2/catch.hpp>

#include "simulator/core/input_error.hpp"
#include "tests/simulator/planner/dflop/dflop_test_support.hpp"

namespace weft::dflop {
namespace {

using Catch::Matchers::Contains;

DflopOptions quick_options() {
  DflopOptions options;
  options.iterations = 2;
  options.profile_samples = 256;
  options.ilp.seconds = 0.5;
  return options;
}

TEST_CASE("DFLOP plans the small VLM and runs its batches against the uniform layouts", "[dflop][planner]") {
  const TrainingScenario scenario = test::load_scenario_text(test::small_dflop_scenario());
  const DflopReport report = plan_dflop(scenario, quick_options());
  CHECK(report.gpus == 8);
  CHECK(report.global_batch == 16);
  REQUIRE(report.dflop.best);
  REQUIRE(report.uniform.best);
  const DflopPlan& best = *report.dflop.best;
  CHECK(best.encoder.gpus() + best.llm.gpus() == 8);
  // The uniform layouts are part of DFLOP's space.
  CHECK(best.expected_makespan_s <= report.uniform.best->expected_makespan_s);
  CHECK(best.encoder_memory <= report.memory_capacity);
  CHECK(best.llm_memory <= report.memory_capacity);
  // The scenario's layout (TP 2, a stage each, 2 replicas, 8 microbatches), the best uniform one,
  // DFLOP's with a random split, with its scheduler, and with adaptive correction.
  REQUIRE(report.runs.size() == 5);
  CHECK(report.runs[0].plan.encoder == ModuleLayout{2, 1, 2});
  CHECK(report.runs[0].plan.llm == ModuleLayout{2, 1, 2});
  CHECK(report.runs[0].plan.microbatches == 8);
  CHECK(report.runs[2].plan.encoder == best.encoder);
  CHECK(report.runs[3].split == BucketMethod::ilp);
  // Without anomalies adaptive correction learns nothing in two batches: its run is the scheduler's
  // with tracking's cost on each batch.
  REQUIRE(report.correction.size() == 2);
  CHECK(report.correction[0].tracking);
  CHECK(report.correction[0].penalties == 0);
  for (std::size_t k = 0; k < 2; ++k) {
    INFO("batch " << k);
    if (report.correction[k].corrected == 0)
      CHECK(report.runs[4].iteration_s[k] == Approx(report.runs[3].iteration_s[k] * 1.04));
  }
  for (const DflopRun& run : report.runs) {
    REQUIRE(run.iteration_s.size() == 2);
    CHECK(run.mean_iteration_s == Approx((run.iteration_s[0] + run.iteration_s[1]) / 2));
    CHECK(run.samples_per_s == Approx(16 / run.mean_iteration_s));
    CHECK(run.tflops_per_gpu > 0.0);
  }
  // Per batch, the scheduler's buckets are no less balanced than the random split's.
  REQUIRE(report.scheduler.size() == 2);
  for (const SchedulerStep& step : report.scheduler) {
    CHECK(step.schedule.c_max <= step.random_c_max + 1e-12);
    CHECK(step.schedule.lower_bound <= step.schedule.c_max + 1e-12);
    CHECK(step.schedule.buckets.size() == static_cast<std::size_t>(best.microbatches * best.llm.dp));
  }
  SECTION("the same scenario gives the same plans and times") {
    const DflopReport again = plan_dflop(scenario, quick_options());
    for (std::size_t k = 0; k < report.runs.size(); ++k) CHECK(again.runs[k].iteration_s == report.runs[k].iteration_s);
  }
}

TEST_CASE("anomalies slow every run, and adaptive correction learns them", "[dflop][planner]") {
  const TrainingScenario scenario = test::load_scenario_text(test::small_dflop_scenario());
  DflopOptions options = quick_options();
  options.iterations = 3;
  const DflopReport plain = plan_dflop(scenario, options);
  options.anomalies = {1.0, 0.5, 1};  // every shape, half the largest stage duration
  const DflopReport slowed = plan_dflop(scenario, options);
  for (std::size_t k = 0; k < plain.runs.size(); ++k)
    CHECK(slowed.runs[k].mean_iteration_s > plain.runs[k].mean_iteration_s);
  // Every shape is off its estimate: after the first batch every shape seen has a penalty.
  REQUIRE(slowed.correction.size() == 3);
  CHECK(slowed.correction[0].penalties == 0);
  CHECK(slowed.correction[1].penalties > 0);
  CHECK(slowed.correction[1].benefit.has_value() == (slowed.correction[1].corrected > 0));
}

TEST_CASE("DFLOP refuses what it cannot plan", "[dflop][planner]") {
  TrainingScenario scenario = test::load_scenario_text(test::small_dflop_scenario());
  TrainingScenario no_data = scenario;
  no_data.data.reset();
  CHECK_THROWS_WITH(plan_dflop(no_data, quick_options()), Contains("needs a \"data\" section"));
  TrainingScenario context_parallel = scenario;
  context_parallel.parallel.cp = 2;
  CHECK_THROWS_WITH(plan_dflop(context_parallel, quick_options()), Contains("parallel.cp"));
  TrainingScenario llm_only = scenario;
  llm_only.model.modules.erase(llm_only.model.modules.begin(), llm_only.model.modules.end() - 1);
  CHECK_THROWS_AS(plan_dflop(llm_only, quick_options()), InputError);
  TrainingScenario tiny = scenario;
  tiny.cluster.gpu.memory_capacity = Bytes{1} << 20;
  CHECK_THROWS_WITH(plan_dflop(tiny, quick_options()), Contains("fits in each GPU's memory"));
}

}  // namespace
}  // namespace weft::dflop
