#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "simulator/core/input_error.hpp"
#include "simulator/core/json_cursor.hpp"
#include "simulator/io/dflop_report.hpp"
#include "simulator/planner/dflop/dflop_planner.hpp"
#include "tools/weft/command_support.hpp"
#include "tools/weft/commands.hpp"
#include "tools/weft/flag_checks.hpp"

namespace weft::cli {
namespace {

struct DflopFlags {
  std::string scenario;
  int iterations = 4;
  double ilp_seconds = 1.0;
  std::int64_t ilp_nodes = 0;
  bool seconds_given = false;  // --ilp-seconds on the command line, not its default
  std::int64_t profile_samples = 2048;
  std::uint64_t seed = 1;
  std::vector<double> anomalies;
  double correction_cost = 0.04;
  int correction_window = 2;
  std::string calibration;
  std::string json_file;
};

void run_dflop(const DflopFlags& flags) {
  check_output_paths({{"--json", &flags.json_file}}, {flags.scenario, flags.calibration});
  const JsonDocument document = JsonDocument::parse_file(flags.scenario);
  const TrainingScenario scenario = with_context(
      flags.scenario, [&] { return load_training_scenario(document.root(), read_calibration(flags.calibration)); });
  check_calibration_device(flags.calibration, scenario.cluster);
  dflop::DflopOptions options;
  options.iterations = flags.iterations;
  // A node budget alone gives every machine the same splits; with --ilp-seconds too, whichever
  // CBC reaches first stops it.
  options.ilp = {.seconds = flags.ilp_nodes > 0 && !flags.seconds_given ? 0.0 : flags.ilp_seconds,
                 .nodes = flags.ilp_nodes};
  options.profile_samples = flags.profile_samples;
  options.seed = flags.seed;
  if (!flags.anomalies.empty()) {
    if (flags.anomalies[0] > 1.0)
      throw InputError(
          fmt::format("--anomalies: expected a share of the shapes from 0 to 1, got {}", flags.anomalies[0]));
    options.anomalies.rate = flags.anomalies[0];
    options.anomalies.latency = flags.anomalies[1];
  }
  options.correction.cost = flags.correction_cost;
  options.correction.window = flags.correction_window;
  const dflop::DflopReport report = with_context(flags.scenario, [&] { return dflop::plan_dflop(scenario, options); });
  const std::string subject =
      fmt::format("{} ({} on {})", flags.scenario, scenario.model.name, scenario.cluster.gpu.name);
  fmt::print("{}", render_dflop_report(subject, report));
  if (!flags.json_file.empty()) {
    write_output("--json", flags.json_file,
                 [&](std::ostream& out) { out << dflop_json(flags.scenario, report).dump(2) << '\n'; });
  }
}

}  // namespace

void add_dflop_command(CLI::App& app) {
  auto flags = std::make_shared<DflopFlags>();
  CLI::App* command = app.add_subcommand(
      "dflop",
      "Plan a vision-language model's training as DFLOP does (papers/003 §3) on the scenario's cluster and per-sample "
      "data: the Model Profiler (each component's throughput and memory at every TP degree, on weft's kernels), the "
      "Data Profiler, the data-aware 3D parallelism optimizer (Algorithm 1: a TP, PP and DP for the encoder and "
      "another for the LLM, and the microbatch count, for the least expected makespan within memory), and the online "
      "microbatch scheduler (an ILP solved by CBC within a time limit or a node budget, else LPT) on each batch, with "
      "its adaptive "
      "correction. Each batch is then timed on the stage model under the scenario's layout and the best uniform "
      "layout with a random split (Megatron-LM's and PyTorch's), under DFLOP's layout with a random split, with its "
      "scheduler, and with adaptive correction; and each of those layouts is simulated op by op, each component on a "
      "mesh of its own, on uniform samples of the dataset's mean shape, beside the stage model on the same samples "
      "(docs/dflop.md).");
  command
      ->add_option("SCENARIO", flags->scenario,
                   "Training scenario JSON file: an encoder and a language model and per-sample data; its parallel "
                   "section is run as the hand-made uniform baseline (DFLOP chooses its own layouts)")
      ->required();
  command->add_option("--iterations", flags->iterations, "Global batches to schedule and time, drawn in turn")
      ->check(integer_from(1, 64))
      ->capture_default_str();
  CLI::Option* seconds =
      command
          ->add_option("--ilp-seconds", flags->ilp_seconds,
                       "The scheduler's time limit for CBC, per batch (its outcome depends on the machine's speed)")
          ->check(number_from(0.001, 600.0))
          ->capture_default_str();
  command
      ->add_option(
          "--ilp-nodes", flags->ilp_nodes,
          "The scheduler's budget of branch-and-bound nodes for CBC, per batch; alone, it replaces the time limit "
          "and every machine computes the same splits (with --ilp-seconds too, whichever comes first stops "
          "the search)")
      ->check(integer_from(1, 1'000'000'000));
  command->add_option("--profile-samples", flags->profile_samples, "Samples the Data Profiler draws from the data")
      ->check(integer_from(1, std::int64_t{1} << 20))
      ->capture_default_str();
  command->add_option("--seed", flags->seed, "Seed of the baselines' random split of each batch")
      ->check(integer_from(0))
      ->capture_default_str();
  command
      ->add_option("--anomalies", flags->anomalies,
                   "RATE,LATENCY: a share of the input shapes (0 to 1) runs slower than profiled, by LATENCY times "
                   "the plan's largest expected stage duration, in every run (DFLOP's evaluation of adaptive "
                   "correction, §5.3.7)")
      ->delimiter(',')
      ->expected(2)
      ->check(number_from(0.0, 100.0));
  command
      ->add_option("--correction-cost", flags->correction_cost,
                   "Adaptive correction's tracking overhead, a share of each batch it runs in")
      ->check(number_from(0.0, 1.0))
      ->capture_default_str();
  command
      ->add_option("--correction-window", flags->correction_window,
                   "Batches of benefit adaptive correction averages before deciding to go on")
      ->check(integer_from(1, 64))
      ->capture_default_str();
  add_calibration_flag(*command, flags->calibration);
  command->add_option("--json", flags->json_file, "Write the report as JSON to this file")->type_name("FILE");
  command->callback([flags, seconds] {
    flags->seconds_given = seconds->count() > 0;
    run_dflop(*flags);
  });
}

}  // namespace weft::cli
