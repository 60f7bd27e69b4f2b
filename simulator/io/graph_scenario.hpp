#pragma once

#include <string>

#include "cost_models/roofline_cost_model.hpp"
#include "simulator/core/json_cursor.hpp"
#include "simulator/graph/graph.hpp"

namespace weft {

// A workload given explicitly as a graph (docs/graph-scenarios.md): devices with their streams,
// tensors, ops with their edges, and the roofline cost rules.
struct GraphScenario {
  std::string description;
  Graph graph;
  RooflineCostModel cost_model;
};

// Reads a graph scenario; every error names the JSON path of the offending value.
GraphScenario load_graph_scenario(const JsonCursor& root);

}  // namespace weft
