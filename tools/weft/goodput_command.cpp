#include <filesystem>
#include <memory>
#include <optional>
#include <string>

#include <fmt/format.h>

#include "simulator/core/json_cursor.hpp"
#include "simulator/engine/engine.hpp"
#include "simulator/io/goodput_html.hpp"
#include "simulator/io/goodput_report.hpp"
#include "simulator/io/progress_bar.hpp"
#include "simulator/resilience/run_setup.hpp"
#include "simulator/workload/training_report.hpp"
#include "simulator/workload/training_workload.hpp"
#include "tools/weft/command_support.hpp"
#include "tools/weft/commands.hpp"
#include "tools/weft/flag_checks.hpp"
#include "tools/weft/interrupt.hpp"

namespace weft::cli {
namespace {

constexpr int kTimelinePoints = 240;

struct GoodputFlags {
  std::string scenario;
  std::string resilience;
  std::optional<double> days;
  std::optional<int> seeds;
  std::optional<std::uint64_t> seed;
  std::optional<double> tokens;
  std::string interval;
  std::optional<int> hot_spares;
  std::string calibration;
  std::string json_file;
  std::string csv_file;
  std::string html_file;
};

// --checkpoint-interval: minutes, auto or none.
void apply_interval_flag(const std::string& text, CheckpointPolicy& checkpoint) {
  if (text.empty()) return;
  checkpoint.enabled = text != "none";
  checkpoint.interval_s.reset();
  checkpoint.interval_iterations.reset();
  if (text == "none" || text == "auto") return;
  std::size_t used = 0;
  double minutes = 0.0;
  try {
    minutes = std::stod(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != text.size() || !(minutes > 0.0) || minutes > kMaxRunDays * 24 * 60) {
    throw InputError("--checkpoint-interval: '" + text + "' is not a positive number of minutes, auto or none");
  }
  checkpoint.interval_s = minutes * 60.0;
}

// The resilience file with the flags' overrides.
ResilienceSpec load_resilience(const GoodputFlags& flags, const TrainingScenario& scenario,
                               const TrainingReport& report) {
  const JsonDocument document = JsonDocument::parse_file(flags.resilience);
  ResilienceSpec spec = with_context(flags.resilience, [&] {
    return load_resilience_spec(document.root(), scenario.cluster.gpus_per_node, checkpoint_bytes(scenario, report),
                                std::filesystem::path(flags.resilience).parent_path());
  });
  if (flags.days) spec.days = *flags.days;
  if (flags.seeds) spec.seeds = *flags.seeds;
  if (flags.seed) spec.first_seed = *flags.seed;
  if (flags.tokens) spec.tokens = *flags.tokens;
  if (flags.hot_spares) {
    if (spec.recovery.kind != RecoveryKind::checkpoint_restart && *flags.hot_spares > 0) {
      throw InputError(std::string("--hot-spares: ") + std::string(kRecoveryKindNames.name(spec.recovery.kind)) +
                       " trains on every healthy node: it keeps no spare idle");
    }
    spec.recovery.hot_spare_nodes = *flags.hot_spares;
  }
  apply_interval_flag(flags.interval, spec.recovery.checkpoint);
  return spec;
}

// Follows a stage of the study on its progress bar, and stops the study there once Ctrl-C or
// SIGTERM arrived (between runs: each takes well under a second).
RunProgress interruptible(ProgressBar& bar, std::string stage) {
  return [&bar, stage = std::move(stage)](std::size_t done, std::size_t total) {
    if (interrupt_requested()) throw_interrupted(fmt::format("while {}, after {} of {} runs", stage, done, total));
    bar.update(done, total);
  };
}

void run_goodput(const GoodputFlags& flags) {
  const InterruptHandler interrupts("weft goodput");
  check_output_paths({{"--json", &flags.json_file}, {"--csv", &flags.csv_file}, {"--html", &flags.html_file}},
                     {flags.scenario, flags.resilience, flags.calibration});
  const JsonDocument document = JsonDocument::parse_file(flags.scenario);
  TrainingScenario scenario = with_context(
      flags.scenario, [&] { return load_training_scenario(document.root(), read_calibration(flags.calibration)); });
  check_calibration_device(flags.calibration, scenario.cluster);
  const TrainingWorkload workload =
      with_context(flags.scenario, [&] { return build_training_workload(scenario, {.name_ops = false}); });
  const SimulationResult result = simulate(workload.graph, *workload.cost_model, SimulationOptions{});
  const TrainingReport report = make_training_report(scenario, workload, result);
  if (report.oom) {
    throw InputError(flags.scenario + ": the plan runs out of memory (weft simulate shows where): no run to study");
  }
  const ResilienceSpec spec = load_resilience(flags, scenario, report);
  const RunSetup setup =
      with_context(flags.resilience, [&] { return make_run_setup(scenario, report, spec, kTimelinePoints); });

  ProgressBar search_bar("searching checkpoint intervals");
  ProgressBar runs_bar("simulating runs");
  const GoodputStudy study =
      run_goodput_study(setup, spec.first_seed, spec.seeds, interruptible(search_bar, "searching checkpoint intervals"),
                        interruptible(runs_bar, "simulating runs"));
  const GoodputSubject subject{.scenario = flags.scenario,
                               .resilience = flags.resilience,
                               .description = spec.description,
                               .failure_source = spec.failures.source};
  fmt::print("{}", render_goodput_report(subject, study));
  if (!flags.json_file.empty()) {
    write_output("--json", flags.json_file,
                 [&](std::ostream& out) { out << goodput_json(subject, study).dump(2) << '\n'; });
  }
  if (!flags.csv_file.empty()) {
    write_output("--csv", flags.csv_file, [&](std::ostream& out) { write_goodput_csv(out, study); });
  }
  if (!flags.html_file.empty()) {
    write_output("--html", flags.html_file, [&](std::ostream& out) { write_goodput_html(out, subject, study); });
  }
}

}  // namespace

void add_goodput_command(CLI::App& app) {
  auto flags = std::make_shared<GoodputFlags>();
  CLI::App* command = app.add_subcommand(
      "goodput",
      "Simulate training runs over days: the scenario's iteration as weft simulates it, interrupted by failures drawn "
      "from a failure model or replayed from a trace, slowed while GPUs run slow (slowdowns), stopped for planned "
      "maintenance, and recovered by "
      "checkpoint-restart (with hot spares, and a checkpoint on a failure's notice), Varuna's job morphing (onto the "
      "nodes left, and again onto repaired ones), Oobleck's pipeline templates or Bamboo's redundant computation, "
      "over many seeds. Prints goodput (tokens trained per wall-clock second), where "
      "the time went (training lost, checkpoints, restarts and reloads, waiting for repairs, planned maintenance, "
      "reconfiguration, "
      "degraded throughput) with its spread over seeds, and the checkpoint interval against Young's and Daly's "
      "formulas.\nRESILIENCE is a resilience file: failures, recovery and runs (docs/resilience.md).");
  command->add_option("SCENARIO", flags->scenario, "Training scenario JSON file")->required();
  command->add_option("RESILIENCE", flags->resilience, "Resilience JSON file")->required();
  command->add_option("--days", flags->days, "Wall-clock days of each run (with --tokens: the most it may take)")
      ->check(number_from(1e-6, kMaxRunDays));
  command->add_option("--seeds", flags->seeds, "Runs to simulate, one per seed")->check(integer_from(1, kMaxSeeds));
  command->add_option("--seed", flags->seed, "The first run's seed (the others follow it)")->check(integer_from(0));
  command
      ->add_option("--tokens", flags->tokens,
                   "Stop each run once it has trained this many tokens (and saved them, when it checkpoints)")
      ->check(positive_number());
  command
      ->add_option("--checkpoint-interval", flags->interval,
                   "Minutes of training between checkpoints, auto (search for the best) or none")
      ->type_name("MINUTES");
  command->add_option("--hot-spares", flags->hot_spares, "Healthy nodes kept idle to replace failed ones")
      ->check(integer_from(0, 1 << 20));
  add_calibration_flag(*command, flags->calibration);
  command->add_option("--json", flags->json_file, "Write the study as JSON to FILE")->type_name("FILE");
  command->add_option("--csv", flags->csv_file, "Write one row per run to FILE")->type_name("FILE");
  command->add_option("--html", flags->html_file, "Write an HTML report with tokens trained over time to FILE")
      ->type_name("FILE");
  command->callback([flags] { run_goodput(*flags); });
}

}  // namespace weft::cli
