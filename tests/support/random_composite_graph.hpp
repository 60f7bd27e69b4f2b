#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "simulator/graph/graph.hpp"
#include "simulator/graph/subgraph.hpp"
#include "tests/support/unit_platform.hpp"

namespace weft::test {

// A seeded random graph on a UnitPlatform that instantiates random subgraph templates as
// composite ops, next to primitive ops, collectives and a shared link: templates of one or two
// GPUs with ports, internal tensors, control edges, signals and nested templates; composites
// bound to random GPUs with their streams in either order; random data, control and signal edges
// among everything. Every edge goes from an earlier op to a later one.
struct RandomCompositeGraph {
  Graph graph;
  RooflineCostModel cost_model;
  std::vector<std::shared_ptr<const Subgraph>> templates;
};

// With `wrap_groups`, templates without composites have random runs of their ops wrapped into
// nested templates (wrap_op_groups): the same graph, whose answer must not change. Bundle
// members are then made and read by those nested composites, and signals come from inside them.
// With `host_issue_ns`, a host issues each GPU stream, outside and in every template; with
// `kernel_gap_ns`, the device waits that long between two ops of such a stream.
RandomCompositeGraph make_random_composite_graph(std::uint64_t seed, bool wrap_groups = false, TimeNs host_issue_ns = 0,
                                                 TimeNs kernel_gap_ns = 0);

}  // namespace weft::test
