#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "simulator/engine/simulation_result.hpp"
#include "simulator/graph/graph.hpp"

namespace weft {

// The human report of one simulation: makespan, per-device utilization and memory, and the
// critical path.
std::string render_simulation_report(const Graph& graph, const SimulationResult& result);

// The same facts for machines (`weft simulate --json`): makespan_ns, devices (name, kind, spec,
// busy_ns, utilization, busy_by_category_ns, peak_memory_bytes, memory_capacity_bytes, oom) and
// critical_path.
nlohmann::json simulation_result_json(const Graph& graph, const SimulationResult& result);

}  // namespace weft
