#include "simulator/resilience/morphing_planner.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <optional>
#include <string>
#include <vector>

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
    "parallel": {"pp": 4, "dp": 3, "zero": 1, "recompute": "full"},
    "training": {"global_batch": 48, "micro_batch": 1, "seq_len": 2048, "dtype": "bf16"}})",
                                                         "test");
  return load_training_scenario(document.root());
}

// Varuna's search done by hand: every depth that divides the 32 layers, as many pipelines as the
// nodes hold, each taking 48 / dp samples; the most samples a second, or nullopt when none fits.
std::optional<MorphedLayout> varuna_by_hand(const TrainingScenario& scenario, int nodes) {
  std::optional<MorphedLayout> best;
  for (int pp = 1; pp <= std::min(nodes, 32); ++pp) {
    if (32 % pp != 0) continue;
    const int dp = nodes / pp;
    const LayoutRun run = simulate_layout(scenario, pp, dp, 48 / dp);
    const MorphedLayout layout{pp, dp, 48 / dp * dp, run.iteration_s};
    if (!run.oom && (!best || layout.samples_per_s() > best->samples_per_s())) best = layout;
  }
  return best;
}

TEST_CASE("Varuna morphs to the fastest layout of its search on the nodes left", "[resilience][varuna]") {
  const TrainingScenario scenario = morphing_scenario();
  MorphingPlanner planner(scenario, 12);
  CHECK(planner.depths() == std::vector<int>{1, 2, 4, 8, 16, 32});
  for (int nodes = 1; nodes <= 12; ++nodes) {
    INFO(nodes << " nodes");
    const auto expected = varuna_by_hand(scenario, nodes);
    const auto& layout = planner.best(nodes);
    REQUIRE(layout.has_value() == expected.has_value());
    // The fewest nodes: the first count the search finds a layout on.
    CHECK((nodes >= planner.min_nodes()) == expected.has_value());
    if (!expected) continue;
    CHECK(layout->pp == expected->pp);
    CHECK(layout->dp == expected->dp);
    CHECK(layout->samples == expected->samples);
    CHECK(layout->iteration_s == expected->iteration_s);
  }
  // On 12 nodes every depth's width (12, 6, 3, 1 pipelines) divides the batch: all 48 samples
  // train, whichever depth wins.
  CHECK(planner.best(12)->samples == 48);
}

// Varuna on the 12 nodes, checkpointing every 600 s of training to storage that writes and reads
// the checkpoint in 1 s, restarting in 300 s; nodes lost as `trace` says.
RunSetup varuna_setup(const TrainingScenario& scenario, std::vector<TraceEvent> trace) {
  RunSetup setup;
  setup.varuna = std::make_shared<MorphingPlanner>(scenario, 12);
  setup.iteration_s = setup.varuna->best(12)->iteration_s;
  setup.tokens_per_iteration = 48 * 2048;
  setup.job_nodes = 12;
  setup.job_gpus = 12;
  setup.failures.trace = std::move(trace);
  setup.recovery.kind = RecoveryKind::varuna;
  setup.recovery.restart_s = 300.0;
  setup.recovery.checkpoint.interval_s = 600.0;
  setup.recovery.checkpoint.bytes = 1e10;
  setup.recovery.checkpoint.write_bytes_per_s = 1e10;  // 1 s a checkpoint and a reload
  setup.recovery.checkpoint.read_bytes_per_s = 1e10;
  setup.recovery.checkpoint.on_notice = true;  // Varuna's default
  setup.horizon_s = 3 * 3600.0;
  return setup;
}

TEST_CASE("a Varuna run restarts on fewer nodes instead of waiting for repairs", "[resilience][varuna]") {
  const TrainingScenario scenario = morphing_scenario();
  // Two nodes lost for good at 1 h and 2 h.
  const RunSetup setup = varuna_setup(scenario, {{3600.0, 1, INFINITY}, {7200.0, 1, INFINITY}});
  const RunOutcome run = simulate_run(setup, 1);
  CHECK(run.interruptions == 2);
  CHECK(run.waiting_s == 0.0);
  CHECK(run.restart_s == Approx(2 * 301.0).epsilon(1e-9));
  // Training before the first failure runs at the healthy pace, and after it no slower than the
  // 10 nodes' layout: the time lost to the slower pace is at most (1 − its rate) × the rest.
  const double rate = setup.varuna->best(10)->samples_per_s() / setup.varuna->best(12)->samples_per_s();
  CHECK(rate < 1.0);
  CHECK(run.degraded_s > 0.0);
  CHECK(run.degraded_s <= (1.0 - rate) * (setup.horizon_s - 3600.0) + 1e-6);
  CHECK(run.trained_s + run.lost_s + run.checkpoint_s + run.restart_s + run.waiting_s + run.reconfigure_s +
            run.degraded_s ==
        Approx(run.wall_s).epsilon(1e-9));
}

TEST_CASE("Varuna morphs back onto a node back from repair when that layout is faster", "[resilience][varuna]") {
  const TrainingScenario scenario = morphing_scenario();
  // A node lost at 1 h and back at 2 h.
  RunSetup setup = varuna_setup(scenario, {{3600.0, 1, 3600.0}});
  const double rate = setup.varuna->best(11)->samples_per_s() / setup.varuna->best(12)->samples_per_s();
  REQUIRE(rate < 1.0);  // 11 nodes hold no layout as fast as 12: the node's return pays
  SECTION("by default: a checkpoint and a restart onto the 12 nodes, then the healthy pace") {
    setup.recovery.morph_on_return = true;
    const RunOutcome run = simulate_run(setup, 1);
    CHECK(run.interruptions == 1);
    CHECK(run.reconfigurations == 1);
    // Two restarts of 300 s and a 1 s reload: the failure's, then the morph's.
    CHECK(run.restart_s == Approx(2 * 301.0).epsilon(1e-9));
    // Slower only from the first restart's end to the node's return: (1 - rate) of that stretch
    // but its periodic checkpoints (1 s each, at most one per 600 s of training).
    CHECK(run.degraded_s <= (1.0 - rate) * (3600.0 - 301.0) + 1e-9);
    CHECK(run.degraded_s >= (1.0 - rate) * (3600.0 - 301.0 - 6.0) - 1e-9);
    CHECK(run.trained_s + run.lost_s + run.checkpoint_s + run.restart_s + run.waiting_s + run.reconfigure_s +
              run.degraded_s ==
          Approx(run.wall_s).epsilon(1e-9));
  }
  SECTION("morph_on_return off: the node waits for the next restart, the run stays on 11 nodes' pace") {
    setup.recovery.morph_on_return = false;
    const RunOutcome run = simulate_run(setup, 1);
    CHECK(run.reconfigurations == 0);
    CHECK(run.restart_s == Approx(301.0).epsilon(1e-9));
    // The periodic checkpoints' 1 s stops are not training at any pace.
    CHECK(run.degraded_s > (1.0 - rate) * (setup.horizon_s - 3600.0 - 301.0 - 20.0));
  }
}

TEST_CASE("Varuna checkpoints when told of a preemption, if the write fits in the notice", "[resilience][varuna]") {
  const TrainingScenario scenario = morphing_scenario();
  RunSetup setup = varuna_setup(scenario, {});
  // By hand: checkpoints at whole iterations, the nearest to 600 s of training, each a 1 s stop;
  // the node is lost `since` into the seventh stretch of training, a third of an iteration past
  // its middle.
  const double stretch = std::max(1.0, std::round(600.0 / setup.iteration_s)) * setup.iteration_s;
  const double cycles = 6.0;
  const double since = stretch / 2.0 + setup.iteration_s / 3.0;
  setup.failures.trace = {{cycles * (stretch + 1.0) + since, 1, INFINITY}};
  const double partial = std::fmod(cycles * stretch + since, setup.iteration_s);
  REQUIRE(partial > 0.0);
  SECTION("no notice: everything since the last checkpoint is lost") {
    const RunOutcome run = simulate_run(setup, 1);
    CHECK(run.lost_s == Approx(since).epsilon(1e-9));
    CHECK(run.interruptions == 1);
  }
  SECTION("30 s of notice: the 1 s write fits, only the iteration under way is lost") {
    setup.failures.notice_s = 30.0;
    const RunOutcome run = simulate_run(setup, 1);
    CHECK(run.lost_s == Approx(partial).epsilon(1e-9));
    CHECK(run.interruptions == 1);
  }
  SECTION("half a second of notice: the write does not fit, Varuna falls back to its last checkpoint") {
    setup.failures.notice_s = 0.5;
    CHECK(simulate_run(setup, 1).lost_s == Approx(since).epsilon(1e-9));
  }
}

}  // namespace
}  // namespace weft
