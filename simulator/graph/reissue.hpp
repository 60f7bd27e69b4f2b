#pragma once

#include <span>
#include <utility>
#include <vector>

#include "simulator/graph/graph.hpp"

namespace weft {

// A new issue order: per stream (by StreamId), the ops it issues, all of the stream's ops once
// each; an empty list keeps the stream's order. Only in_order streams have an issue order.
using StreamOrder = std::vector<std::vector<OpId>>;

// The graph's issue order on every in_order stream: its ops in id order.
StreamOrder issue_order(const Graph& graph);

struct ReissuedGraph {
  Graph graph;
  std::vector<OpId> op_of;  // per op of the original graph: the op it became
};

// A copy of `graph` whose in_order streams issue their ops in `order`, with `edges` (before,
// after; ops of `graph`) added as control edges: what a pipeline schedule changes between two
// simulations of the same work. Devices, streams, tensors and templates keep their ids; ops are
// renumbered, because a graph issues each stream's ops in id order (flattening and template
// recording rely on it): they are added in an order that keeps every stream's new order and
// otherwise the original one. Throws InputError when `order` does not list each stream's ops
// once each, when a composite's places among the ops of its streams disagree, when an edge
// names an unknown op, and when the result has a dependency cycle (the order deadlocks).
ReissuedGraph reissue(const Graph& graph, const StreamOrder& order, std::span<const std::pair<OpId, OpId>> edges = {});

// Each stream's ops in the order of `ranking` (every op of `graph` once): for turning one order
// of all ops, a topological order say, into a StreamOrder.
StreamOrder stream_order_of(const Graph& graph, std::span<const OpId> ranking);

}  // namespace weft
