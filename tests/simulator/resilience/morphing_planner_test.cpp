#include "simulator/resilience/morphing_planner.hpp"

#include <catch2/catch.hpp>

#include <string>

#include "simulator/core/json_cursor.hpp"
#include "simulator/resilience/layout_simulation.hpp"
#include "simulator/resilience/run_simulation.hpp"

namespace weft {
namespace {

// GPT-3 6.7B on up to 12 nodes of one A100 40GB, a batch of 48 in microbatches of 1.
TrainingScenario morphing_scenario() {
  const JsonDocument document = JsonDocument::parse_text(R"({"model": {"base": "gpt3-6.7b"},
    "cluster": {"base": "dgx-a100-superpod", "gpu": "a100-sxm-40gb", "gpus": 12, "gpus_per_node": 1,
                "nics_per_node": 1},
    "parallel": {"pp": 4, "dp": 3, "recompute": "full"},
    "training": {"global_batch": 48, "micro_batch": 1, "seq_len": 2048, "dtype": "bf16"}})",
                                                         "test");
  return load_training_scenario(document.root());
}

TEST_CASE("Varuna morphs to the fastest layout the nodes left hold", "[resilience][varuna]") {
  const TrainingScenario scenario = morphing_scenario();
  MorphingPlanner planner(scenario, 12);
  // The fewest nodes: the first node count with a layout that fits, none below it.
  const int least = planner.min_nodes();
  CHECK(planner.best(least));
  CHECK_FALSE(planner.best(least - 1));
  for (int nodes = least; nodes <= 12; ++nodes) {
    INFO(nodes << " nodes");
    const auto& layout = planner.best(nodes);
    REQUIRE(layout);
    CHECK(layout->pp * layout->dp <= nodes);
    CHECK(48 % layout->dp == 0);
    // No layout of these nodes is faster: every depth, every width that splits the batch.
    for (int pp = 1; pp <= nodes; ++pp) {
      for (int dp = 1; pp * dp <= nodes; ++dp) {
        if (48 % dp != 0) continue;
        try {
          const LayoutRun run = simulate_layout(scenario, pp, dp, 48 / dp);
          if (!run.oom) CHECK(layout->iteration_s <= run.iteration_s);
        } catch (const InvalidPlan&) {
        }
      }
    }
  }
  // More nodes are never slower.
  for (int nodes = least; nodes < 12; ++nodes)
    CHECK(planner.best(nodes + 1)->iteration_s <= planner.best(nodes)->iteration_s);
}

TEST_CASE("a Varuna run restarts on fewer nodes instead of waiting for repairs", "[resilience][varuna]") {
  const TrainingScenario scenario = morphing_scenario();
  RunSetup setup;
  setup.varuna = std::make_shared<MorphingPlanner>(scenario, 12);
  setup.iteration_s = setup.varuna->best(12)->iteration_s;
  setup.tokens_per_iteration = 48 * 2048;
  setup.job_nodes = 12;
  setup.job_gpus = 12;
  // Two nodes lost for good at 1 h and 2 h.
  setup.failures.trace = {{3600.0, 1, INFINITY}, {7200.0, 1, INFINITY}};
  setup.recovery.kind = RecoveryKind::varuna;
  setup.recovery.restart_s = 300.0;
  setup.recovery.checkpoint.interval_s = 600.0;
  setup.recovery.checkpoint.bytes = 1e10;
  setup.recovery.checkpoint.write_bytes_per_s = 1e10;  // 1 s a checkpoint and a reload
  setup.recovery.checkpoint.read_bytes_per_s = 1e10;
  setup.horizon_s = 3 * 3600.0;
  const RunOutcome run = simulate_run(setup, 1);
  CHECK(run.interruptions == 2);
  CHECK(run.waiting_s == 0.0);
  CHECK(run.restart_s == Approx(2 * 301.0).epsilon(1e-9));
  // Training before the first failure runs at the healthy pace, and after it no slower than the
  // 10 nodes' layout: the time lost to the slower pace is at most (1 − its rate) × the rest.
  const double rate = setup.iteration_s / setup.varuna->best(10)->iteration_s;
  CHECK(rate < 1.0);
  CHECK(run.degraded_s > 0.0);
  CHECK(run.degraded_s <= (1.0 - rate) * (setup.horizon_s - 3600.0) + 1e-6);
  CHECK(run.trained_s + run.lost_s + run.checkpoint_s + run.restart_s + run.waiting_s + run.reconfigure_s +
            run.degraded_s ==
        Approx(run.wall_s).epsilon(1e-9));
}

}  // namespace
}  // namespace weft
