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

CompositeId Graph::append_composite(OpId op, SubgraphId subgraph, std::span<const StreamId> streams) {
  const CompositeId composite = CompositeId::at(composites_.size());
  composites_.push_back({op, subgraph, static_cast<std::uint32_t>(composite_streams_.size()),
                         static_cast<std::uint32_t>(streams.size())});
  composite_streams_.insert(composite_streams_.end(), streams.begin(), streams.end());
  composite_next_.insert(composite_next_.end(), streams.size(), OpId::none());
  return composite;
}

}  // namespace weft
