#pragma once

#include "simulator/engine/simulation_result.hpp"
#include "simulator/plan/execution_plan.hpp"
#include "simulator/workload/training_workload.hpp"

namespace weft {

// Throws InputError if execution plans do not cover the scenario yet: context parallelism, TP
// communication overlapped with GEMMs, hybrid sharding, redundant computation, stragglers or
// mixed GPUs, sequence parallelism between meshes of different TP. Check before simulating, not to
// learn it after.
void check_execution_plan_scope(const TrainingScenario& scenario);

// The execution plan of a simulated training iteration (docs/live.md), read off the simulated
// graph and its timeline as PipeWeaver compiles a schedule (papers/001 §7.3): per simulated
// rank, each pipeline pass (a composite of the workload) becomes a stage action holding the
// pass's ops on that rank in the order they started; ops outside passes become compute or
// collective actions; every pipeline transfer becomes an isend and a wait_isend on the sender,
// at the transfer's simulated start and end, and an irecv at its start and a wait_irecv just
// before the first action that reads it on the receiver. Ops off the compute stream are
// asynchronous, and an op waits for those it depends on. Actions are ordered by simulated time.
//
// `workload` must have been built with composites (WorkloadOptions::composites) and `result`
// must be its simulation. Throws what check_execution_plan_scope throws.
ExecutionPlan build_execution_plan(const TrainingScenario& scenario, const TrainingWorkload& workload,
                                   const SimulationResult& result);

}  // namespace weft
