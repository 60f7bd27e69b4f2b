#pragma once

#include "simulator/graph/reissue.hpp"
#include "simulator/workload/training_workload.hpp"

namespace weft {

// The stream order that runs `workload`'s passes in the order `schedule` over `chunks` model
// chunks per stage gives each stage (of every replica), every other op where it was: the same
// work in another schedule, for SimulationCheckpoint::resume (a GPipe plan from the 1F1B one of
// the same layout, say). The schedule must run exactly the passes the workload has (the same
// chunks, weight passes split off in both or in neither); throws InputError otherwise, and for a
// workload without passes (built without composites).
StreamOrder schedule_order(const TrainingWorkload& workload, PipelineSchedule schedule, int chunks);

}  // namespace weft
