#pragma once

#include <ostream>

#include "simulator/engine/simulation_result.hpp"
#include "simulator/graph/graph.hpp"

namespace weft {

// Writes the simulated timeline as Chrome Trace Event JSON (Perfetto, chrome://tracing):
// one process per device (named "<device> (<spec>)"), one thread per stream, an "X" span per op
// (ts/dur in microseconds, args with the op's work), flow arrows for dependencies that cross
// devices, and a "C" memory counter per device when the result holds memory timelines.
void write_chrome_trace(std::ostream& out, const Graph& graph, const SimulationResult& result);

}  // namespace weft
