#pragma once

#include <cstdint>

#include "cost_models/roofline_cost_model.hpp"
#include "simulator/graph/graph.hpp"

namespace weft::bench {

// A synthetic layered DAG: `width` GPUs, one op per GPU per layer, each op consuming the
// activation of its own GPU's previous op and of its neighbour's, every eighth layer a
// communication op on the comm stream. Durations vary over a few interned work entries.
Graph make_layered_graph(std::int64_t op_count, int width);

}  // namespace weft::bench
