#include <memory>
#include <string>

#include <fmt/format.h>

#include "simulator/core/json_cursor.hpp"
#include "simulator/io/entrain_report.hpp"
#include "simulator/planner/entrain/entrain_planner.hpp"
#include "tools/weft/command_support.hpp"
#include "tools/weft/commands.hpp"
#include "tools/weft/flag_checks.hpp"

namespace weft::cli {
namespace {

struct EntrainFlags {
  std::string scenario;
  double confidence = 0.95;
  double error = 0.05;
  std::int64_t first_batch = 1;
  std::string calibration;
  std::string json_file;
};

void run_entrain(const EntrainFlags& flags) {
  check_output_paths({{"--json", &flags.json_file}}, {flags.scenario, flags.calibration});
  const JsonDocument document = JsonDocument::parse_file(flags.scenario);
  const TrainingScenario scenario = with_context(
      flags.scenario, [&] { return load_training_scenario(document.root(), read_calibration(flags.calibration)); });
  check_calibration_device(flags.calibration, scenario.cluster);
  entrain::EntrainOptions options;
  options.alpha = 1.0 - flags.confidence;
  options.p_error = flags.error;
  options.n0 = flags.first_batch;
  const entrain::EntrainReport report =
      with_context(flags.scenario, [&] { return entrain::plan_entrain(scenario, options); });
  const std::string subject =
      fmt::format("{} ({} on {})", flags.scenario, scenario.model.name, scenario.cluster.gpu.name);
  fmt::print("{}", render_entrain_report(subject, report));
  if (!flags.json_file.empty()) {
    write_output("--json", flags.json_file,
                 [&](std::ostream& out) { out << entrain_json(flags.scenario, report).dump(2) << '\n'; });
  }
}

}  // namespace

void add_entrain_command(CLI::App& app) {
  auto flags = std::make_shared<EntrainFlags>();
  CLI::App* command = app.add_subcommand(
      "entrain",
      "Plan a vision-language model's training as Entrain does (papers/002 ch. 4) on the scenario's per-sample data: "
      "a per-layer quadratic cost model, the smallest profiling batch whose GPU allocation between the encoder and the "
      "LLM is stable (Algorithm 2, Bernoulli trials), the layout of each component's pipeline stages (Algorithm 3), "
      "and the hierarchical microbatch assignment with pairwise deferral, split backward and eager forward (Algorithm "
      "4). One global batch is then timed on the stage model with the samples in order (the concatenated baseline), "
      "as weft plan's DIP plans it (20 search expansions), after each of Entrain's steps, and under every split of a "
      "replica's GPUs between the components (Fig. 4.15) (docs/entrain.md).");
  command
      ->add_option("SCENARIO", flags->scenario,
                   "Training scenario JSON file: an encoder and a language model, per-sample data, parallel.tp and "
                   "parallel.dp (the runs' replicas)")
      ->required();
  command->add_option("--confidence", flags->confidence, "Confidence of the Bernoulli test (1 - alpha)")
      ->check(number_from(0.5, 0.9999))
      ->capture_default_str();
  command->add_option("--error", flags->error, "Its error limit: the chance that a fresh batch allocates otherwise")
      ->check(number_from(0.0001, 0.5))
      ->capture_default_str();
  command->add_option("--first-batch", flags->first_batch, "The first profiling batch (n0), doubled until stable")
      ->check(integer_from(1, std::int64_t{1} << 16))
      ->capture_default_str();
  add_calibration_flag(*command, flags->calibration);
  command->add_option("--json", flags->json_file, "Write the report as JSON to this file")->type_name("FILE");
  command->callback([flags] { run_entrain(*flags); });
}

}  // namespace weft::cli
