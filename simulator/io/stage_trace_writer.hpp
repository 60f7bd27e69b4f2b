#pragma once

#include <ostream>

#include "simulator/planner/dip/dip_planner.hpp"

namespace weft {

// Writes a planned schedule's timeline as Chrome Trace Event JSON (Perfetto, chrome://tracing):
// one process per pipeline rank, an "X" span per stage (named by pass, module, microbatch and
// sub-microbatch, with its chunk, layers and recompute choices in args; ts/dur in microseconds),
// a flow arrow per transfer between ranks, and a "C" counter of the activation bytes each rank
// holds (a forward stage's from its start until its backward stage ends).
void write_stage_trace(std::ostream& out, const TrainingScenario& scenario, const dip::DipPlan& plan);

}  // namespace weft
