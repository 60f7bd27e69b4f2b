#pragma once

#include <utility>
#include <vector>

#include "cost_models/cost_model.hpp"
#include "simulator/engine/engine.hpp"
#include "simulator/graph/subgraph.hpp"

namespace weft {

class TemplateScheduler;

// Internal to the engine. Thrown when stamping a template's schedule for a composite could give
// a different answer than simulating its ops one by one; the caller then simulates the graph
// with its composites expanded.
struct ReuseNotExact {};

// What the simulation of a subgraph template records besides its result.
struct TemplateRecording {
  const Subgraph* subgraph = nullptr;  // its port tensors belong to the outside: not counted
  // Per device: the starts (+1) and ends (-1) of its busy intervals, in time order.
  std::vector<std::vector<std::pair<TimeNs, int>>> activity;
};

// One discrete-event run over `graph`; composites are stamped from `templates`. Throws
// ReuseNotExact (see above). `recording` is set when `graph` is a template's.
SimulationResult run_simulation(const Graph& graph, const CostModel& cost_model, const SimulationOptions& options,
                                TemplateScheduler& templates, TemplateRecording* recording);

// simulate() for a graph or, with `recording`, a template: with reuse where exact, else with
// composites expanded.
SimulationResult simulate_graph(const Graph& graph, const CostModel& cost_model, const SimulationOptions& options,
                                ScheduleCache& cache, TemplateRecording* recording);

}  // namespace weft
