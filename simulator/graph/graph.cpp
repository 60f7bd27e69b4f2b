#include "simulator/graph/graph.hpp"

namespace weft {

std::string Graph::display_name(OpId op) const {
  std::string_view name = op_name(op);
  if (!name.empty()) return std::string(name);
  return "op#" + std::to_string(op.value());
}

std::size_t Graph::memory_bytes() const {
  return ops_.capacity() * sizeof(OpRecord) + tensors_.capacity() * sizeof(TensorRecord) + op_inputs_.memory_bytes() +
         op_outputs_.memory_bytes() + successors_.memory_bytes() + control_successors_.memory_bytes() +
         tensor_consumers_.memory_bytes() + collective_members_.memory_bytes();
}

}  // namespace weft
