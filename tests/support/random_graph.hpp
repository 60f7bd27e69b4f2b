#pragma once

#include <cstdint>
#include <vector>

#include "simulator/graph/graph.hpp"
#include "tests/support/unit_platform.hpp"

namespace weft::test {

struct RandomGraphShape {
  int op_count = 200;
  int gpu_count = 4;
  int link_count = 0;              // links carry `send` ops on first_ready streams
  double collective_share = 0.0;   // fraction of ops that start a collective over several GPUs
  int max_dependencies = 3;        // per op, on earlier ops
  double control_share = 0.5;      // of dependencies: control edges (the others are tensors)
  bool tensors_on_reader = false;  // tensors live on their reader's GPU (else on any)
};

// A seeded random graph on a UnitPlatform (durations in ns are the ops' work). Every edge goes
// from an earlier op to a later one and collective members are added consecutively with no
// edges among them, so the graph is acyclic by construction.
struct RandomGraph {
  Graph graph;
  RooflineCostModel cost_model;
  std::vector<TimeNs> duration;  // per op, as costed (collective members: the longest member)
};

RandomGraph make_random_graph(std::uint64_t seed, const RandomGraphShape& shape);

}  // namespace weft::test
