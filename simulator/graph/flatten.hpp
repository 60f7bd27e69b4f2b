#pragma once

#include <cstdint>
#include <vector>

#include "simulator/graph/graph.hpp"

namespace weft {

class Subgraph;

// A graph with every composite replaced by the ops of its template, recursively: what the
// engine simulates when reuse is off or could not be exact, and what traces show. The original
// graph's devices, streams and tensors keep their ids; the ops of each stream keep their order.
struct FlatGraph {
  // One composite's expansion: per template op, the flat op it became, or for a composite
  // inside, the index of that one's expansion.
  struct Expansion {
    const Subgraph* subgraph = nullptr;
    std::vector<OpId> flat_op;
    std::vector<std::uint32_t> child;  // kNoChild for primitive ops
  };
  static constexpr std::uint32_t kNoChild = UINT32_MAX;

  Graph graph;
  std::vector<OpId> original_op;            // per flat op: the top-level op of the original graph
  std::vector<OpId> flat_op;                // per original op: its flat op (none for composites)
  std::vector<std::uint32_t> expansion_of;  // per original composite (CompositeId)
  std::vector<Expansion> expansions;
};

FlatGraph flatten(const Graph& graph);

}  // namespace weft
