#include "simulator/graph/graph_size_limit.hpp"

#include "simulator/core/host_memory.hpp"

namespace weft {

std::int64_t default_max_graph_ops() { return host_memory_bytes() / 2 / kGraphBytesPerOp; }

std::string graph_op_limit_source(std::int64_t max_ops) {
  if (max_ops > 0) return "--max-ops";
  return "half of " + host_memory_text() + "; --max-ops changes it";
}

}  // namespace weft
