#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "simulator/planner/dip/dip_planner.hpp"

namespace weft {

// The planner's text report: the batch, each module's partition, the search, and the ablation
// (each schedule's iteration, busy share and peak activations, and its gain over the first).
std::string render_dip_report(const TrainingScenario& scenario, const dip::DipPlan& plan,
                              const dip::DipOptions& options);

// The plan as JSON (docs/plan.md): the partition, the ablation, and per pipeline rank the ordered
// actions of papers/001 Table 2 (forward_stage, backward_stage, isend, wait_isend, irecv,
// wait_irecv) with the stages' layers, recompute choices and simulated times.
nlohmann::json dip_plan_json(const TrainingScenario& scenario, const dip::DipPlan& plan);

}  // namespace weft
