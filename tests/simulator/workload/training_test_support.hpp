#pragma once

#include <memory>
#include <string>
#include <utility>

#include "simulator/core/json_cursor.hpp"
#include "simulator/engine/engine.hpp"
#include "simulator/workload/training_report.hpp"

namespace weft::test {

inline TrainingScenario scenario_from(const std::string& text,
                                      std::shared_ptr<const CalibratedCostModel> calibration = nullptr) {
  const JsonDocument document = JsonDocument::parse_text(text, "scenario.json");
  return load_training_scenario(document.root(), std::move(calibration));
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
