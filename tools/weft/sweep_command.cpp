#include <algorithm>
#include <chrono>
#include <limits>
#include <memory>
#include <string>
#include <thread>

#include <fmt/format.h>

#include "simulator/core/json_cursor.hpp"
#include "simulator/core/version.hpp"
#include "simulator/engine/engine.hpp"
#include "simulator/engine/schedule_cache.hpp"
#include "simulator/io/chrome_trace_writer.hpp"
#include "simulator/io/progress_bar.hpp"
#include "simulator/io/sweep_html.hpp"
#include "simulator/io/sweep_report_format.hpp"
#include "simulator/planner/sweep.hpp"
#include "tools/weft/command_support.hpp"
#include "tools/weft/commands.hpp"
#include "tools/weft/flag_checks.hpp"
#include "tools/weft/incremental_sweep.hpp"
#include "tools/weft/interrupt.hpp"

namespace weft::cli {
namespace {

struct SweepFlags {
  std::string scenario;
  int gpus = 0;
  std::string grid;
  std::size_t top = 10;
  bool all = false;
  std::string csv_file;
  std::string json_file;
  std::string html_file;
  std::string trace_best_file;
  int threads = 0;
  std::string calibration;
  bool strict = false;
  std::int64_t max_ops = 0;
  double max_minutes = 60.0;
  ReuseFlags reuse;
  IncrementalFlags incremental;
};

// What a sweep's journal must have been written for to be resumed: what decides which plans the
// sweep simulates and what it finds for them. JSON is fingerprinted as parsed, so that its layout
// does not count.
SweepJournalInputs journal_inputs(const JsonDocument& scenario, const std::string& calibration, int gpus,
                                  const SweepGrid& grid, std::size_t prune_beyond_top) {
  std::string profile = "default";  // the cluster's own
  if (calibration == "none") {
    profile = "none";
  } else if (!calibration.empty()) {
    profile = content_fingerprint(JsonDocument::parse_file(calibration).root().json().dump());
  }
  return {{"weft", std::string(version())},
          {"scenario", content_fingerprint(scenario.root().json().dump())},
          {"calibration", profile},
          {"gpus", std::to_string(gpus)},
          {"grid", grid_spec(grid)},
          {"pruning",
           prune_beyond_top == 0 ? std::string("none (--all)") : fmt::format("beyond the top {}", prune_beyond_top)}};
}

void write_trace_of_best(const SweepFlags& flags, const PlanOutcome& best) {
  const TrainingWorkload workload = build_training_workload(best.scenario, {.composites = !flags.reuse.no_reuse});
  SimulationOptions options;
  options.record_memory_timeline = true;
  options.reuse = !flags.reuse.no_reuse;
  const SimulationResult result = simulate(workload.graph, *workload.cost_model, options);
  write_output(
      "--trace-best", flags.trace_best_file,
      [&](std::ostream& out) { write_chrome_trace(out, workload.graph, result); }, "(the best plan's timeline)");
}

void write_outputs(const SweepFlags& flags, const TrainingScenario& base, int gpus, const SweepResult& result) {
  if (!flags.csv_file.empty())
    write_output("--csv", flags.csv_file, [&](std::ostream& out) { write_sweep_csv(out, result); });
  if (!flags.json_file.empty()) {
    write_output("--json", flags.json_file,
                 [&](std::ostream& out) { out << sweep_json(base, gpus, result).dump(2) << '\n'; });
  }
  if (!flags.html_file.empty()) {
    write_output("--html", flags.html_file,
                 [&](std::ostream& out) { write_sweep_html(out, base, gpus, result, flags.top); });
  }
  if (!flags.trace_best_file.empty()) {
    if (result.feasible > 0) {
      write_trace_of_best(flags, result.plans.front());
    } else {
      fmt::print("No trace written: no plan fits.\n");
    }
  }
}

// Simulation time per op the graphs of a sweep hold (graph_size.hpp), on one thread, at its
// fastest measured: the default Llama 3 405B grid, 2,096 plans holding 1.03 G ops, swept in 18.2 s on
// 2 threads (docs/PERFORMANCE.md). tools/demo.sh's grid takes 14x as long per op (2.5 s on 2
// threads for 10.5 M ops): the estimate is a lower bound, so that no grid is refused that would
// finish in time.
constexpr double kSweepSecondsPerHeldOp = 18.2 * 2 / 1.03e9;

// Refuses, before simulating, a grid that would take longer than `max_minutes` at the least if
// every plan were simulated (with pruning, how many are is known only as the sweep goes).
void check_sweep_time(const SweepResult& result, int threads, double max_minutes, bool pruning) {
  const double seconds = static_cast<double>(result.estimated_graph_ops) * kSweepSecondsPerHeldOp / threads;
  if (seconds <= max_minutes * 60.0) return;
  const auto waiting = std::count_if(result.plans.begin(), result.plans.end(), [](const PlanOutcome& plan) {
    return plan.status == PlanStatus::ok && !plan.simulated();
  });
  throw InputError(fmt::format(
      "--grid: {} plans to simulate would take at least {:.0f} minutes on {} thread{}{}, more than --max-minutes {:g}; "
      "narrow the grid with --grid (e.g. \"pp=1..8 cp=1,2\") or raise --max-minutes",
      waiting, seconds / 60.0, threads, threads == 1 ? "" : "s",
      pruning ? " if none were pruned (pruning often simulates a fifth or fewer)" : "", max_minutes));
}

// Where the sweep's time went: enumeration once, then per simulated plan (summed over threads).
// The engine's time includes the templates' (`templates`: the process's schedule cache, which
// only the sweep's simulations used).
void print_phase_times(const SweepResult& result, const ScheduleCacheStats& templates) {
  const SweepPhaseTimes& t = result.phases;
  const double simulated = static_cast<double>(std::max<std::int64_t>(1, result.simulated - result.reused));
  const double per_plan = t.graph + t.engine + t.report;
  fmt::print(
      "Time by phase: enumeration {:.2f} s (deriving {} plans {:.2f} s, estimating memory and graph size {:.2f} s); "
      "per simulated plan {:.2f} ms (graph {:.2f} ms, engine {:.2f} ms of which template lookups {:.2f} ms and "
      "template simulations {:.2f} ms, report {:.2f} ms), summed over threads\n",
      t.derive + t.estimate, result.considered, t.derive, t.estimate, 1e3 * per_plan / simulated,
      1e3 * t.graph / simulated, 1e3 * t.engine / simulated, 1e3 * templates.lookup_s / simulated,
      1e3 * templates.simulation_s / simulated, 1e3 * t.report / simulated);
}

// The communicator placements of the simulated plans that the calibration profile measured no
// communication over, each once.
std::vector<CommGroup> uncalibrated_placements(const SweepResult& result) {
  std::vector<CommGroup> placements;
  for (const PlanOutcome& plan : result.plans) {
    for (const CommGroup& group : plan.uncalibrated_placements) {
      const bool listed = std::any_of(placements.begin(), placements.end(), [&](const CommGroup& g) {
        return g.size == group.size && g.ranks_per_node == group.ranks_per_node;
      });
      if (!listed) placements.push_back(group);
    }
  }
  return placements;
}

void run_sweep_command(const SweepFlags& flags) {
  const InterruptHandler interrupts("weft sweep");
  check_output_paths({{"--csv", &flags.csv_file},
                      {"--json", &flags.json_file},
                      {"--html", &flags.html_file},
                      {"--trace-best", &flags.trace_best_file}},
                     {flags.scenario, flags.calibration});
  IncrementalSweep journal(flags.incremental, flags.csv_file);

  const auto start = std::chrono::steady_clock::now();
  const JsonDocument document = JsonDocument::parse_file(flags.scenario);
  TrainingScenario base = with_context(flags.scenario, [&] { return load_sweep_scenario(document.root()); });
  apply_calibration(flags.calibration, base.cluster);
  const int gpus = flags.gpus > 0 ? flags.gpus : base.cluster.gpus;
  SweepGrid grid = default_grid(base, gpus);
  if (!flags.grid.empty()) {
    with_context("--grid", [&] {
      apply_grid_spec(grid, flags.grid);
      check_grid(grid, base);
    });
  }

  SweepResult result = enumerate_sweep(base, grid, gpus, flags.max_ops);
  const int threads =
      flags.threads > 0 ? flags.threads : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  // A resumed sweep counts only the plans its journal does not hold; a new journal is started only
  // once the grid is accepted.
  const std::size_t prune_beyond_top = flags.all ? 0 : flags.top;
  if (journal.resuming()) {
    journal.open(result, journal_inputs(document, flags.calibration, gpus, grid, prune_beyond_top));
  }
  check_sweep_time(result, threads, flags.max_minutes, prune_beyond_top > 0);
  if (journal.enabled() && !journal.resuming()) {
    journal.open(result, journal_inputs(document, flags.calibration, gpus, grid, prune_beyond_top));
  }
  ProgressBar progress("simulating");
  SweepOptions options;
  options.threads = threads;
  options.max_ops = flags.max_ops;
  options.reuse = !flags.reuse.no_reuse;
  options.prune_beyond_top = prune_beyond_top;
  options.progress = [&](std::size_t done, std::size_t total) { progress.update(done, total); };
  options.on_simulated = [&](const PlanOutcome& plan) { journal.add(plan); };
  options.stop = [] { return interrupt_requested(); };
  simulate_sweep(result, options);
  if (result.interrupted()) {
    const std::int64_t done = result.simulated - result.unfinished;
    throw_interrupted(fmt::format("after {} of {} plans", done, result.simulated), journal.resume_hint(done));
  }
  check_calibrated_placements(uncalibrated_placements(result), flags.strict);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const std::int64_t simulated_now = result.simulated - result.reused;

  fmt::print("weft sweep {}\n", flags.scenario);
  fmt::print("{}", render_sweep_report(base, gpus, result, flags.top));
  if (journal.enabled() && result.reused > 0) {
    fmt::print("\nResumed from {}: {} plans as recorded there, {} simulated now\n", journal.file(), result.reused,
               simulated_now);
  }
  fmt::print("\nSwept in {:.2f} s on {} thread(s): {} plans simulated, {:.1f} plans/s\n", seconds, options.threads,
             simulated_now, static_cast<double>(simulated_now) / seconds);
  print_reuse_stats(flags.reuse);
  if (flags.reuse.stats) {
    fmt::print("Checkpoint-restore: {} GPipe plans resumed from the checkpoint of their 1F1B plan\n", result.resumed);
    print_phase_times(result, ScheduleCache::shared().stats());
  }
  try {
    write_outputs(flags, base, gpus, result);
  } catch (Interrupted& stop) {
    if (journal.enabled()) stop.hint = journal.resume_hint(result.simulated);
    throw;
  }
  journal.finish();
}

}  // namespace

void add_sweep_command(CLI::App& app) {
  auto flags = std::make_shared<SweepFlags>();
  CLI::App* command = app.add_subcommand(
      "sweep",
      "Search the parallel layouts (TP, PP, CP, VPP, micro-batch, recompute, ZeRO, schedule; for a model of several "
      "modules also a shared pipeline or stages per module, and how layers are dealt to stages) for the GPUs of a "
      "cluster, drop those that cannot run or fit, simulate in parallel those that may enter the top K (every one "
      "with --all), and rank them by throughput.\n"
      "SCENARIO is a training scenario; its model, cluster, training, options and per-sample data are kept and its "
      "parallel section is not read (docs/sweep.md).");
  command->add_option("SCENARIO", flags->scenario, "Scenario JSON file")->required();
  command->add_option("--gpus", flags->gpus, "GPUs to plan for (default: the cluster's)")
      ->type_name("N")
      ->check(integer_from(1, std::numeric_limits<int>::max()));
  command
      ->add_option("--grid", flags->grid,
                   "Axes to narrow or widen, e.g. \"tp=1,2,4,8 pp=1..16 mb=1,2\"; axes tp, pp, cp, vpp, mb, "
                   "recompute (none, selective, full, full/firstN: the first N layers of each chunk, full/everyK: "
                   "every K-th layer of each rank, full/uniformN: every layer in groups of N; N and K may be ranges, "
                   "full/first1..8), zero, dp_shard (all, node, or hybrid "
                   "sharding's group sizes), schedule, sp, layout "
                   "(shared, modality), partition (even, "
                   "parameters, time), "
                   "module_stages (balanced or every)")
      ->type_name("SPEC");
  command
      ->add_option("--top", flags->top,
                   "Plans to show (default 10); plans whose compute alone is slower than the K-th best are not "
                   "simulated (pruned) unless --all")
      ->type_name("K")
      ->check(integer_from(1));
  command->add_flag("--all", flags->all,
                    "Simulate every plan that may fit, also those that cannot enter the top K (for --csv, --json and "
                    "--html of the whole grid)");
  command->add_option("--csv", flags->csv_file, "Write every plan as CSV to FILE (see --incremental)")
      ->type_name("FILE");
  command->add_option("--json", flags->json_file, "Write every plan as JSON to FILE")->type_name("FILE");
  command->add_option("--html", flags->html_file, "Write a self-contained HTML report to FILE")->type_name("FILE");
  command->add_option("--trace-best", flags->trace_best_file, "Write the best plan's Chrome trace to FILE")
      ->type_name("FILE");
  command->add_option("--threads", flags->threads, "Simulation threads (default: all cores)")
      ->type_name("T")
      ->check(integer_from(1, kMaxThreads));
  add_calibration_flag(*command, flags->calibration);
  add_strict_flag(*command, flags->strict);
  add_reuse_flags(*command, flags->reuse);
  add_incremental_flags(*command, flags->incremental);
  add_max_ops_flag(*command, flags->max_ops);
  command
      ->add_option("--max-minutes", flags->max_minutes,
                   "Refuse a grid estimated to take longer than M minutes to simulate (default 60); narrow it with "
                   "--grid instead where you can")
      ->type_name("M")
      ->check(positive_number());
  command->callback([flags] { run_sweep_command(*flags); });
}

}  // namespace weft::cli
