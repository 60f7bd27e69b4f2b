#pragma once

#include "simulator/engine/simulation_result.hpp"
#include "simulator/plan/plan_graph.hpp"
#include "simulator/planner/dip/dip_planner.hpp"

namespace weft::dip {

// A DIP plan as weft live runs it (`execution`, from dip_execution_plan), timed by the full
// simulator (`graph`, `result`).
struct SimulatedDipPlan {
  ExecutionPlan execution;
  PlanGraph graph;
  SimulationResult result;
};

// A DIP plan as weft live would run it, timed by the full simulator: every
// op of every stage, the pipeline transfers the stage model leaves out, tensor-parallel
// collectives as the plan issues them; the scenario's options (ideal network, collective
// algorithm) and calibration apply as in weft simulate.
// plan_dip attaches this to the plan it returns (DipPlan::simulation).
SimulatedDipPlan simulate_dip_plan(const TrainingScenario& scenario, const DipPlan& plan);

}  // namespace weft::dip
