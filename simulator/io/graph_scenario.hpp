#pragma once

#include <cstdint>
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

// Reads a graph scenario; every error names the JSON path of the offending value. One of more than
// `max_ops` ops (graph_op_limit: 0 is the default) is refused before any is built.
GraphScenario load_graph_scenario(const JsonCursor& root, std::int64_t max_ops = 0);

}  // namespace weft
