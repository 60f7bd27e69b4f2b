#include "simulator/resilience/bamboo_stages.hpp"

#include <fmt/format.h>
#include <catch2/catch.hpp>

#include <algorithm>

#include "tests/simulator/workload/training_test_support.hpp"

namespace weft {
namespace {

using Loss = BambooStages::Loss;

TEST_CASE("Bamboo's stages: a lost stage is covered unless a stage next to it is lost, and spare nodes fail harmlessly",
          "[resilience][bamboo]") {
  // Two pipelines of 4 stages, each stage on a node of one H100.
  BambooPlanner planner(test::scenario_from(fmt::format(
      R"({{"model": {}, "cluster": {{"base": "dgx-h100", "gpus": 8, "gpus_per_node": 1, "nics_per_node": 1}},
                      "parallel": {{"pp": 4, "dp": 2}}, "training": {{"global_batch": 64, "seq_len": 2048}}}})",
      test::kSmallLlama)));
  BambooStages stages(planner);
  stages.reset(2);
  REQUIRE(stages.pipelines() == 2);
  const auto healthy = stages.samples_per_s();
  REQUIRE(healthy.has_value());
  // The job's nodes count pipeline 0's four stages, then pipeline 1's, then unused ones.
  CHECK(stages.lose_node(8) == Loss::unused);
  CHECK(stages.lose_node(5) == Loss::covered);  // pipeline 1, stage 1: run by stage 0's node
  // Pipeline 1 now runs 3 stages on its own nodes (0, 2, 3): its node 1 is stage 2, next to the
  // lost stage 1.
  CHECK(stages.lose_node(4 + 1) == Loss::fatal);
  // Stage 3 of pipeline 1 (its node 2) is not next to stage 1.
  CHECK(stages.lose_node(4 + 2) == Loss::covered);
  // Pipeline 0's stage 0 is next to its stage 3 (the first stage's copy is on the last).
  CHECK(stages.lose_node(3) == Loss::covered);
  CHECK(stages.lose_node(0) == Loss::fatal);
  // The job runs at the pace of its slowest pipeline, slower than healthy.
  const auto slowed = stages.samples_per_s();
  REQUIRE(slowed.has_value());
  CHECK(*slowed < *healthy);
  CHECK(*slowed == std::min(*planner.samples_per_s(2, {3}), *planner.samples_per_s(2, {1, 3})));
  stages.reset(2);
  CHECK(stages.samples_per_s() == healthy);
}

}  // namespace
}  // namespace weft
