#pragma once

#include <vector>

#include "simulator/engine/engine.hpp"

namespace weft::test {

// The start and end of every op of `graph`, and of every op inside each composite placed at its
// absolute time (depth first): what must agree between two simulations that claim the same answer.
std::vector<TimeNs> all_op_times(const Graph& graph, const SimulationResult& result);

// Catch2 checks that both results have the same busy time, busy time per category, memory peak,
// its time and memory timeline on every device.
void require_same_devices(const SimulationResult& a, const SimulationResult& b);

// Catch2 checks that both devices have the same memory peak, its time and memory timeline.
void require_same_memory(const DeviceResult& a, const DeviceResult& b);

// `graph` simulated with its memory timeline, with or without reuse, templates kept in `cache`.
SimulationResult simulate_with(const Graph& graph, const CostModel& cost_model, bool reuse, ScheduleCache& cache);

// `graph` simulated with reuse, after Catch2 requires that reuse gives exactly the expanded
// simulation's makespan, op times, memory and busy time (templates kept in `cache`).
SimulationResult require_reuse_exact(const Graph& graph, const CostModel& cost_model, ScheduleCache& cache);

}  // namespace weft::test
