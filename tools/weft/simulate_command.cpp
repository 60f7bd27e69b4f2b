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
#include "tools/weft/commands.hpp"

namespace weft::cli {
namespace {

struct SimulateFlags {
  std::string scenario;
  std::string trace_file;
  std::string json_file;
};

// Prefixes an InputError with the flag or file it concerns.
template <class Fn>
auto with_context(const std::string& context, Fn&& fn) {
  try {
    return fn();
  } catch (const InputError& error) {
    throw InputError(context + ": " + error.what());
  }
}

void run_simulate(const SimulateFlags& flags) {
  if (!flags.trace_file.empty()) with_context("--trace", [&] { check_output_path(flags.trace_file); });
  if (!flags.json_file.empty()) with_context("--json", [&] { check_output_path(flags.json_file); });

  const JsonDocument document = JsonDocument::parse_file(flags.scenario);
  const GraphScenario scenario = with_context(flags.scenario, [&] { return load_graph_scenario(document.root()); });
  SimulationOptions options;
  options.record_memory_timeline = !flags.trace_file.empty();
  const SimulationResult result =
      with_context(flags.scenario, [&] { return simulate(scenario.graph, scenario.cost_model, options); });

  fmt::print("weft simulate {}\n", flags.scenario);
  if (!scenario.description.empty()) fmt::print("{}\n", scenario.description);
  fmt::print("{}", render_simulation_report(scenario.graph, result));

  if (!flags.json_file.empty()) {
    with_context("--json", [&] {
      write_file_atomically(flags.json_file, [&](std::ostream& out) {
        out << simulation_result_json(scenario.graph, result).dump(2) << '\n';
      });
    });
    fmt::print("\nWrote {}\n", flags.json_file);
  }
  if (!flags.trace_file.empty()) {
    with_context("--trace", [&] {
      write_file_atomically(flags.trace_file,
                            [&](std::ostream& out) { write_chrome_trace(out, scenario.graph, result); });
    });
    fmt::print("Wrote {} (open it in https://ui.perfetto.dev or chrome://tracing)\n", flags.trace_file);
  }
}

}  // namespace

void add_simulate_command(CLI::App& app) {
  auto flags = std::make_shared<SimulateFlags>();
  CLI::App* command = app.add_subcommand(
      "simulate",
      "Simulate one workload and report its makespan, per-device utilization, peak memory and critical path.\n"
      "SCENARIO is a graph scenario: devices, tensors and ops in JSON (docs/graph-scenarios.md).");
  command->add_option("SCENARIO", flags->scenario, "Scenario JSON file")->required();
  command->add_option("--trace", flags->trace_file, "Write the timeline as Chrome Trace Event JSON to FILE")
      ->type_name("FILE");
  command->add_option("--json", flags->json_file, "Write the results as JSON to FILE")->type_name("FILE");
  command->callback([flags] { run_simulate(*flags); });
}

}  // namespace weft::cli
