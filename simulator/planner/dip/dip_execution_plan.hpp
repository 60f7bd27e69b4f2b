#pragma once

#include "simulator/plan/execution_plan.hpp"
#include "simulator/planner/dip/dip_planner.hpp"

namespace weft::dip {

// The execution plan `weft live` runs (docs/live.md) for a DIP plan of `scenario`: a program per
// pipeline rank, shared by its TP and DP peers, of the rank's actions in order (rank_actions).
// A forward stage's ops are its layers' forward ops for its sub-microbatch; a backward stage's,
// layer by layer from the last, first what the layer's tuned policy recomputes (every forward
// op under full recompute, the attention core under selective), then each step's input
// gradient, sequence-parallel regather and weight gradient. Tensor-parallel collectives run on
// the "tp" communicator, in issue order on the compute stream. A transfer carries the input of
// the stage it feeds (forward) or the gradient of the input of the stage that sends it
// (backward). Gradient reduction and the optimizer step are not in it, as they are not in the
// planner's stage model.
ExecutionPlan dip_execution_plan(const TrainingScenario& scenario, const DipPlan& plan);

}  // namespace weft::dip
