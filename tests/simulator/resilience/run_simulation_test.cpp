#include "simulator/resilience/run_simulation.hpp"

#include <catch2/catch.hpp>

#include <cmath>
#include <numeric>
#include <vector>

#include "simulator/resilience/checkpoint_interval.hpp"
#include "simulator/resilience/goodput_study.hpp"

namespace weft {
namespace {

// One cause of failures on a job of `nodes` nodes, `mtbf_s` between failures of the job.
FailureModel one_cause(double mtbf_s, std::int64_t nodes, BlastRadius radius, double repair_s = 0.0) {
  FailureModel model;
  model.causes.push_back({.name = "cause",
                          .rate_per_node_s = 1.0 / (mtbf_s * static_cast<double>(nodes)),
                          .blast_radius = radius,
                          .repair_s = repair_s,
                          .repair = RepairDistribution::fixed});
  return model;
}

// A job of 4 nodes of 8 GPUs training 1,000 tokens a 10 s iteration; synchronous checkpoints of
// `checkpoint_s` every `interval_s`, restarts of `restart_s` (a reload of 0 s more).
RunSetup setup_of(FailureModel failures, double interval_s, double checkpoint_s, double restart_s) {
  RunSetup setup;
  setup.iteration_s = 10.0;
  setup.tokens_per_iteration = 1000.0;
  setup.job_nodes = 4;
  setup.job_gpus = 32;
  setup.failures = std::move(failures);
  setup.recovery.checkpoint.interval_s = interval_s;
  setup.recovery.checkpoint.bytes = checkpoint_s;
  setup.recovery.checkpoint.write_bytes_per_s = 1.0;
  setup.recovery.checkpoint.read_bytes_per_s = 1e300;
  setup.recovery.restart_s = restart_s;
  setup.horizon_s = 1e12;
  return setup;
}

double sum_of_parts(const RunOutcome& run) {
  return run.trained_s + run.lost_s + run.checkpoint_s + run.restart_s + run.waiting_s + run.maintenance_s +
         run.reconfigure_s + run.degraded_s;
}

// Planned stops of a job of 4 nodes, one every `every_s` on average, each `downtime_s` long.
PlannedCause planned_every(double every_s, double downtime_s) {
  return {.name = "maintenance", .rate_per_node_s = 1.0 / (every_s * 4), .downtime_s = downtime_s};
}

TEST_CASE("a run without failures takes its iterations and its checkpoints, exactly", "[resilience]") {
  RunSetup setup = setup_of(FailureModel{}, 600.0, 7.0, 60.0);
  setup.target_tokens = 1'000'000.0;  // 1,000 iterations of 10 s
  SECTION("without checkpoints: iterations times the iteration time") {
    setup.recovery.checkpoint.enabled = false;
    const RunOutcome run = simulate_run(setup, 1);
    CHECK(run.reached_target);
    CHECK(run.wall_s == 1000 * 10.0);
    CHECK(run.interruptions == 0);
    CHECK(run.checkpoints == 0);
  }
  SECTION("with checkpoints every 60 iterations: 16 on the way and the trained model's, 7 s each") {
    const RunOutcome run = simulate_run(setup, 1);
    CHECK(run.checkpoints == 17);
    CHECK(run.wall_s == Approx(10'000.0 + 17 * 7.0).epsilon(1e-12));
    CHECK(run.checkpoint_s == Approx(17 * 7.0).epsilon(1e-12));
  }
  SECTION("asynchronous: 1 s stalls on the way, and the trained model waited for until written") {
    setup.recovery.checkpoint.mode = CheckpointMode::async;
    setup.recovery.checkpoint.bytes = 32.0 * 7.0;          // 7 s a GPU to copy its shard at 1 B/s... of 32 GPUs
    setup.recovery.checkpoint.snapshot_bytes_per_s = 7.0;  // ...so 1 s; 224 s to write at 1 B/s
    const RunOutcome run = simulate_run(setup, 1);
    // A write takes 224 s, less than the 600 s between snapshots: none waits for the one before.
    CHECK(run.checkpoints == 17);
    CHECK(run.wall_s == Approx(10'000.0 + 16 * 1.0 + (1.0 + 224.0)).epsilon(1e-12));
  }
}

TEST_CASE("a run's time splits into its parts, and a seed replays it", "[resilience]") {
  RunSetup setup = setup_of(one_cause(3600.0, 4, BlastRadius::node, 1800.0), 600.0, 7.0, 60.0);
  setup.horizon_s = 30 * 86400.0;
  setup.recovery.hot_spare_nodes = 1;
  setup.timeline_points = 30;
  const RunOutcome run = simulate_run(setup, 42);
  CHECK(run.interruptions > 100);
  CHECK(run.wall_s == setup.horizon_s);
  CHECK(sum_of_parts(run) == Approx(run.wall_s).epsilon(1e-9));
  REQUIRE(run.timeline.size() == 30);
  CHECK(run.timeline.back() == run.trained_s);
  const RunOutcome again = simulate_run(setup, 42);
  CHECK(again.wall_s == run.wall_s);
  CHECK(again.trained_s == run.trained_s);
  CHECK(again.timeline == run.timeline);
  CHECK(simulate_run(setup, 43).trained_s != run.trained_s);
  SECTION("asynchronous checkpoints: failures abandon the one being written") {
    setup.recovery.checkpoint.mode = CheckpointMode::async;
    setup.recovery.checkpoint.bytes = 32.0 * 100.0;  // 100 s a GPU's shard, then 3,200 s to write
    setup.recovery.checkpoint.snapshot_bytes_per_s = 1.0;
    const RunOutcome async = simulate_run(setup, 42);
    CHECK(async.interruptions > 100);
    CHECK(async.checkpoints > 0);
    CHECK(sum_of_parts(async) == Approx(async.wall_s).epsilon(1e-9));
    // A snapshot waits for the write before it: at most one every 3,300 s of checkpointing.
    CHECK(static_cast<double>(async.checkpoints) * 3300.0 <= async.wall_s);
  }
}

TEST_CASE("a job without spares waits out each repair of its nodes", "[resilience]") {
  // One node, no spare, repairs of exactly 2 h: every failure stops the job for 2 h, and no
  // failure happens while the node is out.
  RunSetup setup = setup_of(one_cause(5 * 3600.0, 1, BlastRadius::node, 7200.0), 600.0, 7.0, 60.0);
  setup.job_nodes = 1;
  setup.job_gpus = 8;
  setup.target_tokens = 20'000'000.0;  // 55.6 h of training
  const RunOutcome run = simulate_run(setup, 7);
  REQUIRE(run.interruptions > 0);
  CHECK(run.waiting_s == Approx(static_cast<double>(run.interruptions) * 7200.0).epsilon(1e-12));
  SECTION("with a spare the job restarts at once") {
    setup.recovery.hot_spare_nodes = 1;
    const RunOutcome spared = simulate_run(setup, 7);
    CHECK(spared.interruptions > 0);
    // The spare is busy after the first failure; a second failure within 2 h of it waits.
    CHECK(spared.waiting_s < run.waiting_s);
  }
}

TEST_CASE("a rack-wide failure takes out every node of its rack", "[resilience]") {
  // Racks of 2 nodes; a job of 2 nodes (one rack) with 2 spares (the other rack): a failure of a
  // job node takes the whole job out, and the spares' rack replaces it at once.
  RunSetup setup = setup_of(one_cause(3600.0, 2, BlastRadius::rack, 1e9), 600.0, 7.0, 60.0);
  setup.failures.rack_nodes = 2;
  setup.job_nodes = 2;
  setup.job_gpus = 16;
  setup.recovery.hot_spare_nodes = 2;
  setup.horizon_s = 86400.0;
  const RunOutcome run = simulate_run(setup, 3);
  // After the first rack failure in the job, the spare rack runs it until its own rack fails; then
  // nothing is left (repairs take 31 years): every later moment is waiting.
  REQUIRE(run.interruptions >= 1);
  CHECK(run.interruptions <= 2);
  CHECK(run.waiting_s > 0.0);
  CHECK(sum_of_parts(run) == Approx(run.wall_s).epsilon(1e-9));
}

// Daly's model: failures at any time (exponential, mean M), each losing the segment under way;
// restarts of R that a failure starts again; T_s of work in segments of τ, each with a
// checkpoint of δ. The simulation's mean over many seeds must match his expected wall time.
TEST_CASE("checkpoint-restart's mean wall time matches Daly's closed form", "[resilience]") {
  const double mtbf = 3600.0;
  const double interval = 600.0;  // 60 iterations
  const double checkpoint = 30.0;
  const double restart = 300.0;
  RunSetup setup = setup_of(one_cause(mtbf, 4, BlastRadius::none), interval, checkpoint, restart);
  setup.target_tokens = 36'000.0 * 1000.0 / 10.0;  // 36,000 s of work: 60 segments
  constexpr int kSeeds = 4000;
  const std::vector<RunOutcome> runs = simulate_runs(setup, 1, kSeeds);
  std::vector<double> walls;
  for (const RunOutcome& run : runs) {
    REQUIRE(run.reached_target);
    walls.push_back(run.wall_s);
  }
  const double mean = std::accumulate(walls.begin(), walls.end(), 0.0) / kSeeds;
  double variance = 0.0;
  for (double wall : walls) variance += (wall - mean) * (wall - mean);
  const double standard_error = std::sqrt(variance / (kSeeds - 1) / kSeeds);
  const double expected = daly_expected_wall_s(36'000.0, interval, checkpoint, restart, mtbf);
  // By hand: 3600 e^{300/3600} (e^{630/3600} − 1) 60 = 3600 × 1.08690 × 0.19125 × 60 = 44,901 s.
  CHECK(expected == Approx(44'901.0).epsilon(1e-3));
  INFO("mean " << mean << " s, standard error " << standard_error << " s, Daly " << expected << " s");
  CHECK(std::abs(mean - expected) < 4.0 * standard_error);
}

TEST_CASE("a trace's events take their nodes out when it says", "[resilience]") {
  // Three nodes out for good at 1 h, 2 h and 3 h; no other failure. Checkpoint-restart without a
  // spare stops at the first and waits for ever.
  RunSetup setup = setup_of(FailureModel{}, 600.0, 7.0, 60.0);
  setup.failures.trace = {{3600.0, 1, INFINITY}, {7200.0, 1, INFINITY}, {10800.0, 1, INFINITY}};
  setup.horizon_s = 5 * 3600.0;
  const RunOutcome run = simulate_run(setup, 1);
  CHECK(run.interruptions == 1);
  CHECK(run.waiting_s == Approx(4 * 3600.0).epsilon(1e-12));
  // Lost: the training since the checkpoint before 1 h (at 3,600 s less the 5 checkpoints' 35 s,
  // 3,565 s of training, of which 3,000 s are checkpointed).
  CHECK(run.lost_s == Approx(565.0).epsilon(1e-9));
  SECTION("with three spares the job never waits") {
    // The trace's nodes are drawn among every healthy node, spares too: an idle spare's loss
    // stops nothing.
    setup.recovery.hot_spare_nodes = 3;
    const RunOutcome spared = simulate_run(setup, 1);
    CHECK(spared.interruptions >= 1);
    CHECK(spared.interruptions <= 3);
    CHECK(spared.waiting_s == 0.0);
  }
}

TEST_CASE("checkpoint-restart checkpoints on a preemption's notice when asked, if the write fits in it",
          "[resilience]") {
  // A node lost for good at 3,600 s, as in the trace test above: 3,565 s of training by then (five
  // checkpoints of 7 s), of which 3,000 s are checkpointed and 5 s are the iteration under way.
  RunSetup setup = setup_of(FailureModel{}, 600.0, 7.0, 60.0);
  setup.failures.trace = {{3600.0, 1, INFINITY}};
  setup.horizon_s = 2 * 3600.0;
  setup.failures.notice_s = 30.0;
  SECTION("not asked: the notice changes nothing") {
    const RunOutcome run = simulate_run(setup, 1);
    CHECK(run.lost_s == Approx(565.0).epsilon(1e-9));
    CHECK(run.checkpoints == 5);
  }
  SECTION("asked, 30 s of notice: the 7 s write fits, only the iteration under way is lost") {
    setup.recovery.checkpoint.on_notice = true;
    const RunOutcome run = simulate_run(setup, 1);
    CHECK(run.lost_s == Approx(5.0).epsilon(1e-9));
    CHECK(run.checkpoints == 6);
    CHECK(run.interruptions == 1);
    CHECK(sum_of_parts(run) == Approx(run.wall_s).epsilon(1e-12));
  }
  SECTION("asked, 5 s of notice: the write does not fit, the job falls back to its last checkpoint") {
    setup.recovery.checkpoint.on_notice = true;
    setup.failures.notice_s = 5.0;
    CHECK(simulate_run(setup, 1).lost_s == Approx(565.0).epsilon(1e-9));
  }
}

TEST_CASE("slowdowns degrade the time they cover, as a Poisson process of fixed-length events does", "[resilience]") {
  // Slowdowns start at rate L on the job and last d each; the time some slowdown covers is, on
  // average, a share 1 - exp(-L d) of the run (the coverage of a Poisson process of segments), and
  // the job trains at rate f through it: degraded time H (1 - exp(-L d)) (1 - f).
  RunSetup setup = setup_of(FailureModel{}, 600.0, 7.0, 60.0);
  setup.recovery.checkpoint.enabled = false;
  setup.horizon_s = 1e6;
  const double duration = 1000.0;
  const double job_rate = 1.0 / duration;  // L d = 1
  setup.failures.slowdowns.push_back(
      {.name = "throttled", .rate_per_node_s = job_rate / 4.0, .duration_s = duration, .speed = 0.5});
  const auto mean_degraded = [&] {
    double sum = 0.0;
    constexpr int kSeeds = 100;
    for (int seed = 1; seed <= kSeeds; ++seed) {
      const RunOutcome run = simulate_run(setup, seed);
      CHECK(sum_of_parts(run) == Approx(run.wall_s).epsilon(1e-12));
      CHECK(run.trained_s + run.degraded_s == Approx(setup.horizon_s).epsilon(1e-12));
      sum += run.degraded_s;
    }
    return sum / kSeeds;
  };
  SECTION("one stage: every slowdown slows the job to f") {
    setup.slowdown_rates = {{0.6}};
    CHECK(mean_degraded() == Approx(setup.horizon_s * (1.0 - std::exp(-1.0)) * 0.4).epsilon(0.02));
  }
  SECTION("two stages, one of which a slowdown does not slow: only half of them count") {
    setup.slowdown_rates = {{0.6, 1.0}};
    CHECK(mean_degraded() == Approx(setup.horizon_s * (1.0 - std::exp(-0.5)) * 0.4).epsilon(0.02));
  }
  SECTION("the failures a seed draws do not depend on the slowdowns") {
    setup.failures = one_cause(3600.0, 4, BlastRadius::none);
    setup.recovery.checkpoint.enabled = true;
    const RunOutcome healthy = simulate_run(setup, 7);
    setup.failures.slowdowns.push_back(
        {.name = "throttled", .rate_per_node_s = job_rate / 4.0, .duration_s = duration, .speed = 0.5});
    setup.slowdown_rates = {{0.6}};
    CHECK(simulate_run(setup, 7).interruptions == healthy.interruptions);
  }
}

TEST_CASE("a planned stop costs the iteration under way, a whole checkpoint, its downtime and a restart",
          "[resilience]") {
  // A stop a day on average, 30 min down; checkpoints of 7 s every 10 min, restarts of 60 s.
  FailureModel failures;
  failures.planned.push_back(planned_every(86400.0, 1800.0));
  RunSetup setup = setup_of(failures, 600.0, 7.0, 60.0);
  setup.target_tokens = 1e9;  // 1,000,000 iterations of 10 s: 116 days of training
  const double work_s = 1e7;
  double stops = 0.0;
  for (std::uint64_t seed = 1; seed <= 20; ++seed) {
    INFO("seed " << seed);
    const RunOutcome run = simulate_run(setup, seed);
    REQUIRE(run.reached_target);
    CHECK(run.interruptions == 0);
    CHECK(run.trained_s == Approx(work_s).epsilon(1e-12));
    // Stops that come together (within one's 31 min) are made once, in one downtime.
    CHECK(run.maintenance_s == Approx(1800.0 * static_cast<double>(run.planned_stops)).epsilon(1e-12));
    CHECK(run.restart_s == Approx(60.0 * static_cast<double>(run.planned_stops)).epsilon(1e-12));
    CHECK(run.checkpoint_s == Approx(7.0 * static_cast<double>(run.checkpoints)).epsilon(1e-12));
    // At most the iteration under way lost at each stop.
    CHECK(run.lost_s <= 10.0 * static_cast<double>(run.planned_stops) + 1e-6);
    // One at each stop, which starts the 10 minutes to the next periodic one afresh: each stretch
    // of training between stops takes its length over 10 min, rounded down, periodic ones.
    const auto periodic = static_cast<std::int64_t>(work_s / 600.0);
    CHECK(run.checkpoints >= periodic - 1);
    CHECK(run.checkpoints <= periodic + run.planned_stops + 1);
    CHECK(sum_of_parts(run) == Approx(run.wall_s).epsilon(1e-12));
    stops += static_cast<double>(run.planned_stops);
  }
  // About one a day over 116 days and 20 runs: a Poisson count of mean 2,330 (sd 48), less the few
  // that come within another's 31 minutes (about 2%).
  CHECK(stops > 2330.0 * 0.98 - 5 * 48.0);
  CHECK(stops < 2330.0 + 5 * 48.0);
}

TEST_CASE("a planned stop that comes while the job is stopped waits for it to compute, and those that wait are one",
          "[resilience]") {
  // A stop an hour on average, 10 h down each: nearly every one comes during another's downtime.
  FailureModel failures;
  failures.planned.push_back(planned_every(3600.0, 36000.0));
  RunSetup setup = setup_of(failures, 600.0, 7.0, 60.0);
  setup.horizon_s = 200 * 3600.0;
  for (std::uint64_t seed = 1; seed <= 20; ++seed) {
    INFO("seed " << seed);
    const RunOutcome run = simulate_run(setup, seed);
    CHECK(sum_of_parts(run) == Approx(run.wall_s).epsilon(1e-12));
    // The first stop writes a checkpoint; each later one comes while the job is down, and stops
    // it again as soon as it has restarted (with nothing to save): a cycle of 10 h and 60 s from
    // the first stop's checkpoint until the horizon.
    const double first_stop_written = run.trained_s + run.lost_s + run.checkpoint_s;
    const double cycles = std::floor((setup.horizon_s - first_stop_written) / 36060.0);
    CHECK(static_cast<double>(run.planned_stops) == cycles + 1);
    CHECK(run.checkpoint_s == Approx(7.0 * static_cast<double>(run.checkpoints)).epsilon(1e-12));
    CHECK(run.checkpoints == static_cast<std::int64_t>(std::floor(run.trained_s / 600.0 + 1e-9)) + 1);
  }
}

TEST_CASE("planned stops and failures together: no time counted twice, each stop one downtime", "[resilience]") {
  // Failures every 2 h of the job that restart it in place, planned stops every 3 h of 1 h;
  // asynchronous checkpoints whose writes (5 min) failures often cut short.
  FailureModel failures = one_cause(7200.0, 4, BlastRadius::none);
  failures.planned.push_back(planned_every(3 * 3600.0, 3600.0));
  RunSetup setup = setup_of(failures, 900.0, 0.0, 120.0);
  setup.recovery.checkpoint.mode = CheckpointMode::async;
  setup.recovery.checkpoint.bytes = 300.0;               // 300 s to write at 1 B/s...
  setup.recovery.checkpoint.snapshot_bytes_per_s = 1.0;  // ...after a snapshot of 300 / 32 s a GPU
  setup.target_tokens = 1e8;                             // 100,000 iterations: 11.6 days of training
  for (std::uint64_t seed = 1; seed <= 50; ++seed) {
    INFO("seed " << seed);
    const RunOutcome run = simulate_run(setup, seed);
    REQUIRE(run.reached_target);
    CHECK(run.trained_s == Approx(1e6).epsilon(1e-12));
    CHECK(run.maintenance_s == Approx(3600.0 * static_cast<double>(run.planned_stops)).epsilon(1e-12));
    // A restart after each failure and each stop, unless a failure cuts it short (failures
    // during a downtime do not stop a job that is not running).
    CHECK(run.restart_s <= 120.0 * static_cast<double>(run.interruptions + run.planned_stops) + 1e-6);
    CHECK(sum_of_parts(run) == Approx(run.wall_s).epsilon(1e-12));
  }
}

}  // namespace
}  // namespace weft
