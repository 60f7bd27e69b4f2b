#include "simulator/resilience/bamboo_planner.hpp"

#include <fmt/format.h>
#include <catch2/catch.hpp>

#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "simulator/resilience/layout_simulation.hpp"
#include "simulator/resilience/run_simulation.hpp"
#include "tests/simulator/workload/training_test_support.hpp"

namespace weft {
namespace {

using Catch::Matchers::Contains;
using test::kSmallLlama;
using test::scenario_from;

// The small Llama (8 layers) in `pipelines` pipelines of `pp` stages on nodes of one H100, a batch
// of 64 in microbatches of 1.
TrainingScenario bamboo_scenario(int pp, int pipelines, const std::string& extra = "") {
  return scenario_from(fmt::format(R"({{"model": {}, "cluster": {{"base": "dgx-h100", "gpus": {}, "gpus_per_node": 1,
                                         "nics_per_node": 1}},
                                       "parallel": {{"pp": {}, "dp": {}{}}},
                                       "training": {{"global_batch": 64, "seq_len": 2048}}}})",
                                   kSmallLlama, pp * pipelines, pp, pipelines, extra));
}

TEST_CASE("Bamboo: a lost stage's layers go to the stage before it, a first stage's to the last",
          "[resilience][bamboo]") {
  const BambooPlanner planner(bamboo_scenario(4, 1, R"(, "stage_layers": [1, 3, 2, 2])"));
  CHECK(planner.merged_layers({}) == std::vector<int>{1, 3, 2, 2});
  CHECK(planner.merged_layers({2}) == std::vector<int>{1, 5, 2});
  CHECK(planner.merged_layers({0}) == std::vector<int>{3, 2, 3});
  CHECK(planner.merged_layers({3, 1}) == std::vector<int>{4, 4});
  CHECK(planner.merged_layers({0, 2}) == std::vector<int>{5, 3});
}

TEST_CASE("Bamboo: pipelines with redundant computation, the slowest setting the pace", "[resilience][bamboo]") {
  const TrainingScenario scenario = bamboo_scenario(4, 2);
  BambooPlanner planner(scenario);
  CHECK(planner.nodes_per_pipeline() == 4);
  TrainingScenario redundant = scenario;
  redundant.parallel.redundant_computation = true;
  // By hand: 2 pipelines of 32 microbatches with redundant computation (the planner times them
  // from runs of 8 and 16).
  const LayoutRun healthy = simulate_layout(redundant, 4, 2, 32);
  CHECK(*planner.samples_per_s(2, {}) == Approx(64 / healthy.iteration_s).epsilon(1e-6));
  // One pipeline lost its last stage: it runs 3 stages of 2, 2 and 4 layers (the output layer on
  // the last), and the job waits for it, as one pipeline of those stages is slower than one of the
  // healthy stages.
  const double slow = simulate_layout(redundant, 3, 1, 32, {2, 2, 4}).iteration_s;
  const double one = simulate_layout(redundant, 4, 1, 32, {2, 2, 2, 2}).iteration_s;
  REQUIRE(slow > one);
  CHECK(*planner.samples_per_s(2, {3}) == Approx(64 / (healthy.iteration_s * slow / one)).epsilon(1e-6));
  // Losing its stage 2 instead leaves the output layer's stage the slowest, as it was: the merged
  // pipeline is no slower than a healthy one, and the job keeps its pace.
  REQUIRE(simulate_layout(redundant, 3, 1, 32, {2, 4, 2}).iteration_s <= one);
  CHECK(*planner.samples_per_s(2, {2}) == *planner.samples_per_s(2, {}));
  // One pipeline takes the whole batch; 64 pipelines would take no sample.
  CHECK(planner.samples(1) == 64);
  CHECK(planner.samples(3) == 63);
  CHECK_FALSE(planner.samples_per_s(65, {}));
}

TEST_CASE("Bamboo refuses what it does not run", "[resilience][bamboo][errors]") {
  CHECK_THROWS_WITH(BambooPlanner(bamboo_scenario(4, 1, R"(, "recompute": "full")")),
                    Contains("set parallel.recompute to none"));
  CHECK_THROWS_WITH(BambooPlanner(bamboo_scenario(4, 1, R"(, "schedule": "gpipe")")),
                    Contains("bamboo: parallel.redundant_computation") && Contains("'1f1b'"));
  CHECK_THROWS_WITH(BambooPlanner(scenario_from(fmt::format(
                        R"({{"model": {}, "cluster": {{"base": "dgx-h100", "gpus": 8, "gpus_per_node": 4}},
                            "parallel": {{"pp": 4, "tp": 2}}, "training": {{"global_batch": 8, "seq_len": 2048}}}})",
                        kSmallLlama))),
                    Contains("each stage must span whole nodes"));
}

// A pipeline of two single-GPU nodes: the first loss is ridden through, the second is fatal.
RunSetup two_stage_run(const TrainingScenario& scenario) {
  RunSetup setup;
  setup.bamboo = std::make_shared<BambooPlanner>(scenario);
  setup.iteration_s = 64 / *setup.bamboo->samples_per_s(1, {});
  setup.tokens_per_iteration = 64 * 2048;
  setup.job_nodes = 2;
  setup.job_gpus = 2;
  setup.failures.trace = {{3600.0, 1, INFINITY}, {7200.0, 1, INFINITY}};
  setup.recovery.kind = RecoveryKind::bamboo;
  setup.recovery.reconfigure_s = 30.0;
  setup.recovery.restart_s = 300.0;
  setup.recovery.checkpoint.enabled = false;
  setup.recovery.checkpoint.bytes = 1e10;
  setup.recovery.checkpoint.read_bytes_per_s = 1e10;
  setup.horizon_s = 3 * 3600.0;
  return setup;
}

TEST_CASE("Bamboo: a lost stage slows the job, and losing the stage next to it restarts it", "[resilience][bamboo]") {
  const TrainingScenario scenario = bamboo_scenario(2, 1);
  const RunSetup setup = two_stage_run(scenario);
  const RunOutcome run = simulate_run(setup, 1);
  // The first loss: the other node runs both stages after a 30 s pause, losing the iteration
  // under way; the second: fatal, and no node is left to restart on.
  CHECK(run.reconfigurations == 1);
  CHECK(run.reconfigure_s == Approx(30.0).epsilon(1e-12));
  CHECK(run.interruptions == 1);
  CHECK(run.waiting_s == Approx(3600.0).epsilon(1e-9));
  // The pace on one node: a pipeline of one stage of all 8 layers, against the healthy two.
  BambooPlanner planner(scenario);
  const double rate = *planner.samples_per_s(1, {1}) / *planner.samples_per_s(1, {});
  REQUIRE(rate < 1.0);
  CHECK(run.degraded_s == Approx((1.0 - rate) * (3600.0 - 30.0)).epsilon(1e-9));
  // Nothing was checkpointed: the fatal loss takes all the training done.
  CHECK(run.trained_s == 0.0);
  CHECK(run.lost_s + run.degraded_s + run.reconfigure_s + run.waiting_s == Approx(run.wall_s).epsilon(1e-9));
}

}  // namespace
}  // namespace weft
