// The graph-size estimate against the graphs the builder really builds, and the limit's refusal.
#include "simulator/workload/graph_size.hpp"

#include <catch2/catch.hpp>

#include <fstream>
#include <sstream>
#include <string>

#include "simulator/core/input_error.hpp"
#include "tests/simulator/workload/training_test_support.hpp"
#include "tests/support/cli_expectations.hpp"

namespace weft {
namespace {

using Catch::Matchers::Contains;

TrainingScenario experiment_scenario(const std::string& name) {
  std::ifstream in(test::experiment(name));
  std::stringstream text;
  text << in.rdbuf();
  return test::scenario_from(text.str());
}

std::string small_scenario(const std::string& parallel, const std::string& training) {
  return R"({"model": )" + test::kSmallLlama + R"(, "cluster": {"base": "dgx-h100", "gpus": 16}, "parallel": )" +
         parallel + R"(, "training": )" + training + "}";
}

// The estimate may overcount (it is a guard) but never undercounts; with every op in the graph it
// stays within 3x, with composites within the flattened estimate.
void check_estimate(const TrainingScenario& scenario, bool unfold) {
  for (const bool composites : {false, true}) {
    INFO("unfold " << unfold << ", composites " << composites);
    const WorkloadOptions options{.unfold = unfold, .name_ops = false, .composites = composites};
    const GraphSize size = estimate_training_graph(scenario, options);
    const auto held = static_cast<std::int64_t>(build_training_workload(scenario, options).graph.op_count());
    CHECK(size.held_ops >= held);
    if (composites) {
      CHECK(size.held_ops <= size.ops);
    } else {
      CHECK(size.held_ops <= 3 * held);
      CHECK(size.ops == size.held_ops);
    }
    CHECK(size.bytes == size.held_ops * kGraphBytesPerOp);
  }
}

TEST_CASE("the graph size estimate bounds the ops the builder makes, within 3x", "[workload][size]") {
  const char* plans[] = {
      R"({"tp": 2, "pp": 2, "dp": 4, "schedule": "1f1b", "sequence_parallel": true})",
      R"({"tp": 1, "pp": 4, "dp": 4, "vpp": 2, "schedule": "interleaved"})",
      R"({"tp": 2, "pp": 2, "dp": 2, "cp": 2, "schedule": "1f1b", "recompute": "full"})",
      R"({"tp": 1, "pp": 2, "dp": 8, "schedule": "zb-h1", "recompute": "selective"})",
      R"({"tp": 2, "pp": 2, "dp": 4, "zero": 3, "recompute": "full"})",
      R"({"tp": 1, "pp": 4, "dp": 4, "vpp": 2, "schedule": "interleaved", "zero": 3})",
  };
  for (const char* plan : plans) {
    INFO(plan);
    const TrainingScenario scenario =
        test::scenario_from(small_scenario(plan, R"({"global_batch": 64, "micro_batch": 1, "seq_len": 2048})"));
    check_estimate(scenario, false);
    check_estimate(scenario, true);
  }
  for (const char* name : {"llama3-70b-1024xh100", "llama3-405b-16384xh100", "t2v-xl-3072xh100", "vlm-s-16xh800-dip"}) {
    INFO(name);
    check_estimate(experiment_scenario(name), false);
  }
}

TEST_CASE("the op count is linear in the microbatches and grows with the ranks unfolded", "[workload][size]") {
  const std::string plan = R"({"tp": 2, "pp": 2, "dp": 4, "schedule": "1f1b"})";
  auto estimate = [&](int global_batch, bool unfold) {
    const std::string training = R"({"seq_len": 2048, "global_batch": )" + std::to_string(global_batch) + "}";
    return estimate_training_graph(test::scenario_from(small_scenario(plan, training)), {.unfold = unfold});
  };
  const GraphSize small = estimate(64, false);
  const GraphSize twice = estimate(128, false);
  const GraphSize four_times = estimate(256, false);
  CHECK(small.microbatches == 16);
  CHECK(four_times.microbatches == 64);
  CHECK(four_times.ops - twice.ops == 2 * (twice.ops - small.ops));
  // Unfolded, each of the 2 stages has tp x dp = 8 ranks doing the folded rank's work.
  const GraphSize unfolded = estimate(64, true);
  CHECK(unfolded.simulated_ranks == 16);
  CHECK(unfolded.ops == 8 * small.ops);
}

TEST_CASE("a global batch of 2^31 samples is refused before any graph is built", "[workload][size]") {
  const TrainingScenario scenario = test::scenario_from(small_scenario(
      R"({"tp": 2, "pp": 2, "dp": 4, "schedule": "1f1b"})", R"({"global_batch": 2147483648, "seq_len": 2048})"));
  const GraphSize size = estimate_training_graph(scenario, {});
  CHECK(size.microbatches == 536870912);
  try {
    build_training_workload(scenario, {.max_ops = 1'000'000});
    FAIL("expected an InputError");
  } catch (const InputError& error) {
    CHECK_THAT(error.what(), Contains("training.global_batch: 2,147,483,648 samples make 536,870,912 microbatches on "
                                      "each of 2 simulated ranks") &&
                                 Contains("the limit is 1,000,000 ops (--max-ops)"));
  }
}

TEST_CASE("unfolded ranks are named as the cause when they make the size", "[workload][size]") {
  // TP collectives as whole ops (no overlap splitting the GEMMs beside them): 1,024 ranks outnumber
  // the ops of a microbatch.
  TrainingScenario scenario = experiment_scenario("llama3-70b-1024xh100");
  scenario.stack.tp_comm_overlap = false;
  CHECK_THROWS_WITH(build_training_workload(scenario, {.unfold = true, .max_ops = 100'000}),
                    Contains("--unfold: 1,024 simulated ranks of 16 microbatches"));
  CHECK_NOTHROW(build_training_workload(scenario, {.unfold = false, .max_ops = 100'000}));
}

}  // namespace
}  // namespace weft
