// GraphBuilder::renumbered: a built graph with its ops in a new order, for re-simulating the same
// work in another schedule (simulator/graph/reissue.hpp). It fills the builder's pending edges
// directly instead of adding op by op, so the ops' own checks are not repeated, and build() makes
// the adjacency, dependency counts and cycle check as for any graph.
#include "simulator/core/input_error.hpp"
#include "simulator/graph/graph_builder.hpp"
#include "simulator/graph/subgraph.hpp"

namespace weft {

Graph GraphBuilder::renumbered(const Graph& graph, std::span<const OpId> sequence, std::span<const OpId> op_of,
                               std::span<const std::pair<OpId, OpId>> edges) {
  GraphBuilder builder;
  Graph& g = builder.graph_;
  g.tensors_ = graph.tensors_;
  for (TensorRecord& tensor : g.tensors_) {
    if (tensor.producer.valid()) tensor.producer = op_of[tensor.producer.value()];
  }
  g.subgraphs_ = graph.subgraphs_;
  g.works_ = graph.works_;
  g.specs_ = graph.specs_;
  g.devices_ = graph.devices_;
  g.streams_ = graph.streams_;
  g.collective_name_ = graph.collective_name_;
  g.names_ = graph.names_;
  builder.last_in_stream_.assign(graph.stream_count(), OpId::none());
  builder.bundles_checked_ = true;

  const bool composites = graph.composite_count() > 0;
  std::vector<CompositeId> composite_of(graph.composite_count(), CompositeId::none());  // by old composite
  g.ops_.reserve(sequence.size());
  if (composites) g.op_composite_.reserve(sequence.size());
  for (OpId old : sequence) {
    const OpId id = OpId::at(g.ops_.size());
    OpRecord record = graph.ops_[old.value()];
    record.next_in_stream = OpId::none();
    record.dependency_count = 0;
    g.ops_.push_back(record);
    const CompositeId composite = graph.op_composite(old);
    if (composite.valid()) {
      composite_of[composite.value()] =
          g.append_composite(id, graph.composite(composite).subgraph, graph.composite_streams(composite));
    }
    if (composites)
      g.op_composite_.push_back(composite.valid() ? composite_of[composite.value()] : CompositeId::none());
    for (StreamId stream : op_streams(g, id)) builder.issue_on_stream(id, stream);
    const auto inputs = graph.op_inputs(old);
    for (std::size_t i = 0; i < inputs.size(); ++i) {
      builder.inputs_.emplace_back(id, inputs[i]);
      builder.input_weak_.push_back(graph.input_is_weak(old, i) ? 1 : 0);
    }
    for (TensorId output : graph.op_outputs(old)) builder.outputs_.emplace_back(id, output);
  }
  // Edges in the order the graph was given them (by old id), then the new ones.
  for (std::size_t i = 0; i < graph.op_count(); ++i) {
    const OpId old = OpId::at(i);
    for (OpId successor : graph.control_successors(old)) {
      builder.control_edges_.emplace_back(op_of[i], op_of[successor.value()]);
    }
    if (const CompositeId composite = graph.op_composite(old); composite.valid()) {
      for (const auto& [signal, successor] : graph.signal_successors(composite)) {
        builder.signal_edges_.emplace_back(composite_of[composite.value()],
                                           std::make_pair(signal, op_of[successor.value()]));
      }
    }
  }
  for (const auto& [before, after] : edges) builder.add_control_edge(before, after);
  for (std::size_t c = 0; c < graph.collective_count(); ++c) {
    const CollectiveId collective = CollectiveId::at(c);
    for (OpId member : graph.collective_members(collective)) {
      builder.collective_members_.emplace_back(collective, op_of[member.value()]);
    }
  }
  return std::move(builder).build();
}

}  // namespace weft
