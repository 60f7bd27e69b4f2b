#pragma once

#include "simulator/resilience/resilience_spec.hpp"
#include "simulator/resilience/run_simulation.hpp"
#include "simulator/workload/training_report.hpp"
#include "simulator/workload/training_scenario.hpp"

namespace weft {

// A checkpoint of `scenario`: every parameter in the dtype the stack keeps it in, and the
// optimizer's states (fp32 main copy and Adam's moments, as the stack keeps them) of the trainable
// ones.
double checkpoint_bytes(const TrainingScenario& scenario, const TrainingReport& report);

// The runs of `spec` for the job `scenario` describes, whose healthy iteration `report` holds.
RunSetup make_run_setup(const TrainingScenario& scenario, const TrainingReport& report, const ResilienceSpec& spec,
                        int timeline_points);

}  // namespace weft
