#pragma once

#include <memory>
#include <string>
#include <utility>

#include "simulator/core/json_cursor.hpp"
#include "simulator/engine/engine.hpp"
#include "simulator/workload/training_report.hpp"

namespace weft::test {

// Llama 3 8B cut to 8 layers of hidden 2048: every feature of the full model, simulated fast.
inline const std::string kSmallLlama =
    R"({"base": "llama3-8b", "layers": 8, "hidden": 2048, "ffn_hidden": 7168, "heads": 16, "kv_heads": 4})";

inline TrainingScenario scenario_from(const std::string& text,
                                      std::shared_ptr<const CalibratedCostModel> calibration = nullptr) {
  const JsonDocument document = JsonDocument::parse_text(text, "scenario.json");
  return load_training_scenario(document.root(), std::move(calibration));
}

// A scenario for weft sweep (no parallel section).
inline TrainingScenario sweep_scenario_from(const std::string& text) {
  const JsonDocument document = JsonDocument::parse_text(text, "scenario.json");
  return load_sweep_scenario(document.root());
}

struct TrainingRun {
  TrainingWorkload workload;
  SimulationResult result;
  TrainingReport report;
};

inline TrainingRun run_training(const TrainingScenario& scenario, const WorkloadOptions& options, bool reuse = true) {
  TrainingRun run{build_training_workload(scenario, options), {}, {}};
  SimulationOptions simulation;
  simulation.reuse = reuse;
  run.result = simulate(run.workload.graph, *run.workload.cost_model, simulation);
  run.report = make_training_report(scenario, run.workload, run.result);
  return run;
}

inline TrainingRun run_training(const TrainingScenario& scenario, bool unfold = false) {
  return run_training(scenario, {.unfold = unfold});
}

}  // namespace weft::test
