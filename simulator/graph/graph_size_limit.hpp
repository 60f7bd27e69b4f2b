#pragma once

// How many ops a graph may hold on this machine: the limit that makes weft refuse a scenario it
// cannot hold instead of allocating until the memory runs out.

#include <cstdint>
#include <string>

#include "simulator/core/units.hpp"

namespace weft {

// Memory a graph takes per op it holds: the peak resident memory over the ops of `weft simulate
// --unfold --no-reuse` on the Llama 3 70B, Llama 3 405B and GPT-3 175B experiments measured
// 251-263 B (docs/PERFORMANCE.md, size guards).
inline constexpr Bytes kGraphBytesPerOp = 264;

// The most ops a graph may hold by default: half of this machine's memory at kGraphBytesPerOp.
std::int64_t default_max_graph_ops();

// `max_ops`, or the default where it is 0.
inline std::int64_t graph_op_limit(std::int64_t max_ops) { return max_ops > 0 ? max_ops : default_max_graph_ops(); }

// Where a limit comes from, for messages: "--max-ops", or "half of this machine's 24 GiB; --max-ops
// changes it".
std::string graph_op_limit_source(std::int64_t max_ops);

}  // namespace weft
