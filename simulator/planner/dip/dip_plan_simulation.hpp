#pragma once

#include "simulator/engine/simulation_result.hpp"
#include "simulator/plan/plan_graph.hpp"
#include "simulator/planner/dip/dip_planner.hpp"

namespace weft::dip {

struct SimulatedDipPlan {
  PlanGraph graph;
  SimulationResult result;
};

// A DIP plan as weft live would run it (dip_execution_plan), timed by the full simulator: every
// op of every stage, the pipeline transfers the stage model leaves out, tensor-parallel
// collectives as the plan issues them; the scenario's options (ideal network, collective
// algorithm) and calibration apply as in weft simulate.
SimulatedDipPlan simulate_dip_plan(const TrainingScenario& scenario, const DipPlan& plan);

}  // namespace weft::dip
