#pragma once

#include <string>

#include "simulator/core/json_cursor.hpp"
#include "simulator/engine/engine.hpp"
#include "simulator/workload/training_report.hpp"

namespace weft::test {

inline TrainingScenario scenario_from(const std::string& text) {
  const JsonDocument document = JsonDocument::parse_text(text, "scenario.json");
  return load_training_scenario(document.root());
}

struct TrainingRun {
  TrainingWorkload workload;
  SimulationResult result;
  TrainingReport report;
};

inline TrainingRun run_training(const TrainingScenario& scenario, bool unfold = false) {
  TrainingRun run{build_training_workload(scenario, {.unfold = unfold}), {}, {}};
  run.result = simulate(run.workload.graph, *run.workload.cost_model);
  run.report = make_training_report(scenario, run.workload, run.result);
  return run;
}

}  // namespace weft::test
