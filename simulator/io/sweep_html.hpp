#pragma once

#include <ostream>

#include "simulator/planner/sweep.hpp"

namespace weft {

// A self-contained HTML report of a sweep (no scripts, no network): a heatmap of the best MFU for
// each TP x PP (out-of-memory cells marked), memory per stage and the time breakdown of the top
// plans, and the table of top plans. Charts are inline SVG with ids mfu-heatmap,
// memory-per-stage and time-breakdown.
void write_sweep_html(std::ostream& out, const TrainingScenario& base, int gpus, const SweepResult& result,
                      std::size_t top);

}  // namespace weft
