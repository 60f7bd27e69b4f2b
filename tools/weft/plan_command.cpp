#include <limits>
#include <memory>
#include <string>
#include <thread>

#include <fmt/format.h>

#include "simulator/core/checked_math.hpp"
#include "simulator/core/json_cursor.hpp"
#include "simulator/io/chrome_trace_writer.hpp"
#include "simulator/io/dip_plan_format.hpp"
#include "simulator/io/stage_trace_writer.hpp"
#include "simulator/planner/dip/dip_plan_simulation.hpp"
#include "simulator/workload/graph_size.hpp"
#include "tools/weft/command_support.hpp"
#include "tools/weft/commands.hpp"
#include "tools/weft/flag_checks.hpp"
#include "tools/weft/interrupt.hpp"

namespace weft::cli {
namespace {

struct PlanFlags {
  std::string scenario;
  double time_budget_s = 10.0;
  std::int64_t iterations = 0;
  int threads = 0;
  std::uint64_t seed = 1;
  int sub_microbatch = 0;
  int window = 0;
  double memory_limit_gib = 0.0;
  std::int64_t max_ops = 0;
  bool slowest = false;
  std::string plan_file;
  std::string json_file;
  std::string trace_file;
  std::string simulated_trace_file;
  std::string calibration;
  bool strict = false;
};

// Budgets beyond these are a hang, not a search: a day, and 10^9 tree expansions (the search makes
// hundreds to thousands a second, docs/plan.md).
constexpr double kMaxTimeBudgetSeconds = 86'400;
constexpr std::int64_t kMaxIterations = 1'000'000'000;

dip::DipOptions planner_options(const PlanFlags& flags) {
  if (!(flags.time_budget_s > 0.0 && flags.time_budget_s <= kMaxTimeBudgetSeconds)) {
    throw InputError(
        fmt::format("--time-budget: expected seconds > 0 and at most {:g} (a day)", kMaxTimeBudgetSeconds));
  }
  dip::DipOptions options;
  options.time_budget_s = flags.time_budget_s;
  options.max_iterations = flags.iterations;
  options.threads =
      flags.threads > 0 ? flags.threads : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  options.seed = flags.seed;
  options.sub_microbatch = flags.sub_microbatch;
  options.window = flags.window;
  options.memory_limit =
      checked_scaled_int64(flags.memory_limit_gib, static_cast<double>(kBytesPerGiB), "--memory-limit-gib");
  options.max_ops = flags.max_ops;
  options.slowest = flags.slowest;
  return options;
}

void run_plan_command(const PlanFlags& flags) {
  const InterruptHandler interrupts("weft plan");
  dip::DipOptions options = planner_options(flags);
  options.stop = [] { return interrupt_requested(); };
  check_output_paths({{"--emit-plan", &flags.plan_file},
                      {"--json", &flags.json_file},
                      {"--trace", &flags.trace_file},
                      {"--simulated-trace", &flags.simulated_trace_file}},
                     {flags.scenario, flags.calibration});
  const JsonDocument document = JsonDocument::parse_file(flags.scenario);
  const TrainingScenario scenario = with_context(
      flags.scenario, [&] { return load_training_scenario(document.root(), read_calibration(flags.calibration)); });
  check_calibration_device(flags.calibration, scenario.cluster);
  with_context(flags.scenario, [&] { check_training_graph_size(scenario, {.max_ops = flags.max_ops}); });
  if (!flags.plan_file.empty() && scenario.data && scenario.parallel.dp > 1) {
    throw InputError(
        "--emit-plan: with per-sample data each of the " + std::to_string(scenario.parallel.dp) +
        " DP replicas has a schedule of its own, and an execution plan holds one program per pipeline rank "
        "(plan a scenario with dp 1)");
  }
  const dip::DipPlan plan = with_context(flags.scenario, [&] { return dip::plan_dip(scenario, options); });
  if (interrupt_requested()) {
    throw_interrupted(fmt::format("while planning, after {} expansions of the search in {:.1f} s",
                                  plan.search.iterations, plan.search_s));
  }

  check_calibrated_placements(*plan.simulation->graph.cost_model, flags.strict);
  fmt::print("weft plan {}\n", flags.scenario);
  if (!scenario.description.empty()) fmt::print("{}\n", scenario.description);
  fmt::print("{}", render_dip_report(scenario, plan, options));
  if (!flags.json_file.empty()) {
    write_output("--json", flags.json_file,
                 [&](std::ostream& out) { out << dip_plan_json(scenario, plan).dump(2) << '\n'; });
  }
  if (!flags.trace_file.empty()) {
    write_output(
        "--trace", flags.trace_file, [&](std::ostream& out) { write_stage_trace(out, scenario, plan); },
        "(open it in https://ui.perfetto.dev or chrome://tracing)");
  }
  const dip::SimulatedDipPlan& simulated = *plan.simulation;
  if (!flags.simulated_trace_file.empty()) {
    write_output(
        "--simulated-trace", flags.simulated_trace_file,
        [&](std::ostream& out) { write_chrome_trace(out, simulated.graph.graph, simulated.result); },
        "(compare it with weft live's measured trace: weft validate)");
  }
  if (!flags.plan_file.empty()) write_execution_plan(flags.plan_file, simulated.execution);
}

}  // namespace

void add_plan_command(CLI::App& app) {
  auto flags = std::make_shared<PlanFlags>();
  CLI::App* command = app.add_subcommand(
      "plan",
      "Search a dynamic interleaved pipeline schedule for one batch of a multimodal training scenario, as "
      "PipeWeaver does (papers/001 §5-§6): partition each modality module into pipeline segments and its "
      "microbatches into sub-microbatches, rank the segment groups by Monte-Carlo tree search, interleave forward "
      "and backward stages under the memory limit, and choose per stage pair which layers to recompute. Prints the "
      "partition and the schedule after each step next to the scenario's own plan (docs/plan.md).\n"
      "SCENARIO is a training scenario; its parallel section gives TP, PP and DP and the baseline schedule, and "
      "its data section the batch (with per-sample data, every DP replica's batch is planned, and the slowest "
      "reported).");
  command->add_option("SCENARIO", flags->scenario, "Scenario JSON file")->required();
  command->add_option("--time-budget", flags->time_budget_s, "Seconds the search may take (default 10, at most 86400)")
      ->type_name("S");
  command
      ->add_option("--iterations", flags->iterations,
                   "Stop the search after N tree expansions instead of a time budget (reproducible on any machine)")
      ->type_name("N")
      ->check(integer_from(1, kMaxIterations));
  command->add_option("--threads", flags->threads, "Search threads (default: all cores)")
      ->type_name("T")
      ->check(integer_from(1, kMaxThreads));
  command->add_option("--seed", flags->seed, "Seed of the search's random rollouts (default 1)")
      ->type_name("N")
      ->check(integer_from(0));
  command
      ->add_option("--sub-microbatch", flags->sub_microbatch,
                   "Images per sub-microbatch of image encoders (default: the smallest within 95% of the best "
                   "efficiency)")
      ->type_name("N")
      ->check(integer_from(1, std::numeric_limits<int>::max()));
  command
      ->add_option("--window", flags->window,
                   "Search only rankings in which each segment group, in microbatch order, takes one of the W "
                   "highest priorities still free (default 0: any ranking, as papers/001 Algorithm 1)")
      ->type_name("W")
      ->check(integer_from(0, std::numeric_limits<int>::max()));
  command->add_option("--memory-limit-gib", flags->memory_limit_gib, "Memory per GPU (default: the GPU's)")
      ->type_name("GIB")
      ->check(positive_number());
  command->add_flag("--slowest", flags->slowest,
                    "Rank for the slowest schedule instead, to see how much ranking matters (papers/001 Fig. 10)");
  command
      ->add_option("--json", flags->json_file,
                   "Write the partition, the schedules and each pipeline rank's actions with their simulated times "
                   "as JSON to FILE")
      ->type_name("FILE");
  command->add_option("--trace", flags->trace_file, "Write the planned schedule's timeline to FILE (Chrome trace)")
      ->type_name("FILE");
  command
      ->add_option("--simulated-trace", flags->simulated_trace_file,
                   "Write the plan's ops as the full simulator times them to FILE (Chrome trace in weft simulate's "
                   "format, for weft validate against weft live's measured trace)")
      ->type_name("FILE");
  command
      ->add_option("--emit-plan", flags->plan_file,
                   "Write the execution plan of the schedule, with every stage's ops, to FILE (run it with weft live)")
      ->type_name("FILE");
  add_calibration_flag(*command, flags->calibration);
  add_strict_flag(*command, flags->strict);
  add_max_ops_flag(*command, flags->max_ops);
  command->callback([flags] { run_plan_command(*flags); });
}

}  // namespace weft::cli
