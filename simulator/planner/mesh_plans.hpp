#pragma once

#include <vector>

#include "simulator/planner/plan_enumeration.hpp"

namespace weft {

// Modules on meshes of their own in a sweep (the grid's module_tp and module_dp axes,
// docs/sweep.md): the variants of `modality_plan` (a plan whose modules have stages of their own)
// in which each transformer module before the last (each encoder, apart) runs on its stages at
// each module_tp (the plan's tp where the axis is not given) and module_dp (where not given, the
// last module's dp), and the last module at the plan's tp with the dp that the GPUs left give it:
//   gpus / cp = sum over encoders of stages x module_tp x module_dp + language stages x tp x dp.
// A variant whose meshes are the plan's own (uniform) is left out: the sweep has that plan
// already. Each variant comes with the rule it breaks (the GPUs do not share out so), or none;
// the caller validates the rest.
std::vector<PlanCandidate> mesh_plans(const TrainingScenario& modality_plan, const SweepGrid& grid, int gpus);

}  // namespace weft
