#include <chrono>
#include <filesystem>
#include <memory>
#include <string>

#include <fmt/format.h>

#include "simulator/core/json_cursor.hpp"
#include "simulator/engine/engine.hpp"
#include "simulator/io/atomic_file.hpp"
#include "simulator/io/chrome_trace_writer.hpp"
#include "simulator/io/graph_scenario.hpp"
#include "simulator/io/simulation_report.hpp"
#include "simulator/io/training_report_format.hpp"
#include "simulator/plan/plan_builder.hpp"
#include "simulator/workload/training_report.hpp"
#include "tools/weft/command_support.hpp"
#include "tools/weft/commands.hpp"

namespace weft::cli {
namespace {

struct SimulateFlags {
  std::string scenario;
  std::string trace_file;
  std::string json_file;
  std::string calibration;
  std::string plan_file;
  bool unfold = false;
  bool strict = false;
  std::int64_t max_ops = 0;
  ReuseFlags reuse;
};

class Stopwatch {
 public:
  double lap_ms() {
    const auto now = std::chrono::steady_clock::now();
    const double ms = std::chrono::duration<double, std::milli>(now - last_).count();
    last_ = now;
    return ms;
  }

 private:
  std::chrono::steady_clock::time_point last_ = std::chrono::steady_clock::now();
};

// Writes the requested output files; the simulation is complete before either is opened.
void write_outputs(const SimulateFlags& flags, const Graph& graph, const SimulationResult& result,
                   const nlohmann::json& json) {
  if (!flags.json_file.empty()) {
    fmt::print("\n");
    write_output("--json", flags.json_file, [&](std::ostream& out) { out << json.dump(2) << '\n'; });
  }
  if (!flags.trace_file.empty()) {
    write_output(
        "--trace", flags.trace_file, [&](std::ostream& out) { write_chrome_trace(out, graph, result); },
        "(open it in https://ui.perfetto.dev or chrome://tracing)");
  }
}

void run_graph(const SimulateFlags& flags, const JsonCursor& root, const SimulationOptions& options) {
  if (flags.unfold) throw InputError("--unfold: applies to training scenarios only");
  if (!flags.calibration.empty()) throw InputError("--calibration: applies to training scenarios only");
  if (!flags.plan_file.empty()) throw InputError("--emit-plan: applies to training scenarios only");
  const GraphScenario scenario = with_context(flags.scenario, [&] { return load_graph_scenario(root, flags.max_ops); });
  const SimulationResult result =
      with_context(flags.scenario, [&] { return simulate(scenario.graph, scenario.cost_model, options); });
  fmt::print("weft simulate {}\n", flags.scenario);
  if (!scenario.description.empty()) fmt::print("{}\n", scenario.description);
  fmt::print("{}", render_simulation_report(scenario.graph, result));
  print_reuse_stats(flags.reuse);
  write_outputs(flags, scenario.graph, result, simulation_result_json(scenario.graph, result));
}

// The iteration of `scenario`'s plan with every GPU and NIC at full speed, folded.
double healthy_iteration_time_s(TrainingScenario scenario, const SimulationOptions& options) {
  scenario.cluster.stragglers = nullptr;
  const TrainingWorkload healthy = build_training_workload(scenario, {.name_ops = false});
  SimulationOptions plain = options;
  plain.record_memory_timeline = false;
  return static_cast<double>(simulate(healthy.graph, *healthy.cost_model, plain).makespan) / kNsPerSecond;
}

// A plan that asks for selective recompute where it recomputes nothing gets the numbers of no
// recompute: said on stderr, so that nobody reads them as another framework's selective checkpointing.
void warn_if_selective_recompute_keeps_all(const TrainingScenario& scenario) {
  if (scenario.parallel.recompute != RecomputePolicy::selective || scenario.selective_recompute_drops_activations()) {
    return;
  }
  fmt::print(stderr,
             "weft: warning: parallel.recompute: 'selective' recomputes the attention scores and softmax output "
             "that only unfused attention keeps (Megatron-LM's selective recomputation); this plan's attention is "
             "fused, so it keeps every activation, as 'none' does (per-op selective checkpointing, as torchtitan "
             "runs it, is not modelled)\n");
}

void run_training(const SimulateFlags& flags, const JsonCursor& root, const SimulationOptions& options) {
  Stopwatch watch;
  // The profile costs ops from the start: a "time" stage partition balances under it.
  auto calibration = read_calibration(flags.calibration);
  TrainingScenario scenario =
      with_context(flags.scenario, [&] { return load_training_scenario(root, std::move(calibration)); });
  check_calibration_device(flags.calibration, scenario.cluster);
  warn_if_selective_recompute_keeps_all(scenario);
  if (!flags.plan_file.empty()) with_context("--emit-plan", [&] { check_execution_plan_scope(scenario); });
  const TrainingWorkload workload = with_context(flags.scenario, [&] {
    // Op names are read only by the trace and the execution plan; naming every op costs as much
    // as building the graph.
    const bool name_ops = !flags.trace_file.empty() || !flags.plan_file.empty();
    return build_training_workload(
        scenario,
        {.unfold = flags.unfold, .name_ops = name_ops, .composites = !flags.reuse.no_reuse, .max_ops = flags.max_ops});
  });
  check_calibrated_placements(*workload.cost_model, flags.strict);
  const double build_ms = watch.lap_ms();
  const SimulationResult result =
      with_context(flags.scenario, [&] { return simulate(workload.graph, *workload.cost_model, options); });
  const double simulate_ms = watch.lap_ms();
  TrainingReport report = make_training_report(scenario, workload, result);
  if (report.stragglers) report.stragglers->healthy_iteration_time_s = healthy_iteration_time_s(scenario, options);
  fmt::print("weft simulate {}\n", flags.scenario);
  if (!scenario.description.empty()) fmt::print("{}\n", scenario.description);
  fmt::print("{}", render_training_report(scenario, report));
  fmt::print("\nSimulated in {:.0f} ms (graph {:.0f} ms, engine {:.0f} ms)\n", build_ms + simulate_ms, build_ms,
             simulate_ms);
  print_reuse_stats(flags.reuse);
  if (flags.reuse.stats && !flags.reuse.no_reuse) {
    fmt::print("Templates: {} passes, {} layers nested in them\n", workload.pass_templates, workload.layer_templates);
  }
  write_outputs(flags, workload.graph, result, training_report_json(scenario, report));
  if (!flags.plan_file.empty()) {
    const ExecutionPlan plan =
        with_context("--emit-plan", [&] { return build_execution_plan(scenario, workload, result); });
    write_execution_plan(flags.plan_file, plan);
  }
}

void run_simulate(const SimulateFlags& flags) {
  check_output_paths({{"--trace", &flags.trace_file}, {"--json", &flags.json_file}, {"--emit-plan", &flags.plan_file}},
                     {flags.scenario, flags.calibration});
  if (!flags.plan_file.empty() && flags.reuse.no_reuse) {
    throw InputError("--emit-plan: plans are read off the passes --no-reuse does not build");
  }

  const JsonDocument document = JsonDocument::parse_file(flags.scenario);
  const JsonCursor root = document.root();
  SimulationOptions options;
  options.record_memory_timeline = !flags.trace_file.empty();
  options.reuse = !flags.reuse.no_reuse;
  if (root.is_object() && root.json().contains("ops")) return run_graph(flags, root, options);
  if (root.is_object() && root.json().contains("model")) return run_training(flags, root, options);
  throw InputError(flags.scenario +
                   ": (top level): expected a training scenario (model, cluster, parallel, training) or a graph "
                   "scenario (devices, ops)");
}

}  // namespace

void add_simulate_command(CLI::App& app) {
  auto flags = std::make_shared<SimulateFlags>();
  CLI::App* command = app.add_subcommand(
      "simulate",
      "Simulate one training iteration and report iteration time, throughput, MFU, time per pipeline stage and "
      "memory per GPU.\nSCENARIO is a training scenario (a model, or a multimodal model of encoders, "
      "projectors and a backbone, some frozen, each on a mesh of its own if asked; cluster, parallel plan, training, "
      "and optionally per-sample "
      "data with images and video; docs/scenarios.md) or a graph scenario (devices, tensors, ops; "
      "docs/graph-scenarios.md).");
  command->add_option("SCENARIO", flags->scenario, "Scenario JSON file")->required();
  command->add_option("--trace", flags->trace_file, "Write the timeline as Chrome Trace Event JSON to FILE")
      ->type_name("FILE");
  command->add_option("--json", flags->json_file, "Write the results as JSON to FILE")->type_name("FILE");
  command->add_flag("--unfold", flags->unfold,
                    "Simulate every rank instead of one per pipeline stage (training scenarios; slower, same answer "
                    "for uniform data)");
  add_calibration_flag(*command, flags->calibration);
  add_strict_flag(*command, flags->strict);
  command
      ->add_option("--emit-plan", flags->plan_file,
                   "Write the execution plan of the simulated iteration to FILE: per rank, its passes, collectives "
                   "and transfers in simulated order, for weft live (training scenarios; docs/live.md)")
      ->type_name("FILE");
  add_reuse_flags(*command, flags->reuse);
  add_max_ops_flag(*command, flags->max_ops);
  command->callback([flags] { run_simulate(*flags); });
}

}  // namespace weft::cli
