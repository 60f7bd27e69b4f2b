#pragma once

#include <random>
#include <utility>
#include <vector>

#include "simulator/graph/graph.hpp"

namespace weft::test {

// A random order of all ops of `graph` that respects its data, control and signal edges but not
// its streams' issue order (Kahn's algorithm over collectives merged into one node, as
// GraphBuilder's cycle check does; written again here so that tests do not lean on the code
// they check), with each collective's members side by side: turned into a
// StreamOrder (stream_order_of), a random schedule of the same work that cannot deadlock.
std::vector<OpId> random_ranking(const Graph& graph, std::mt19937_64& rng);

// Up to `count` random edges (before, after) that follow `ranking` and do not join members of one
// collective: dependencies a schedule could add without making a cycle.
std::vector<std::pair<OpId, OpId>> random_edges(const Graph& graph, const std::vector<OpId>& ranking, int count,
                                                std::mt19937_64& rng);

}  // namespace weft::test
