#include "simulator/graph/flatten.hpp"

#include <algorithm>
#include <string>
#include <unordered_map>

#include "simulator/graph/graph_builder.hpp"
#include "simulator/graph/subgraph.hpp"

namespace weft {
namespace {

std::string qualified(const std::string& prefix, std::string_view name) {
  return name.empty() ? std::string() : prefix + "/" + std::string(name);
}

// A node whose dependency edges are being mapped: a flat op, or an expansion.
struct Node {
  OpId flat_op = OpId::none();
  std::uint32_t expansion = FlatGraph::kNoChild;
};

class Flattener {
 public:
  explicit Flattener(const Graph& graph) : graph_(graph) {}

  FlatGraph run() {
    builder_.copy_platform(graph_);
    for (std::size_t i = 0; i < graph_.tensor_count(); ++i) {
      const TensorRecord& tensor = graph_.tensor(TensorId::at(i));
      builder_.add_tensor(graph_.tensor_name(TensorId::at(i)), tensor.device, tensor.kind, tensor.bytes);
    }
    out_.flat_op.assign(graph_.op_count(), OpId::none());
    out_.expansion_of.assign(graph_.composite_count(), FlatGraph::kNoChild);
    std::vector<Node> nodes(graph_.op_count());
    const Scope outer = outer_scope();
    for (std::size_t i = 0; i < graph_.op_count(); ++i) {
      const OpId op = OpId::at(i);
      if (const CompositeId composite = graph_.op_composite(op); composite.valid()) {
        nodes[i].expansion = out_.expansion_of[composite.value()] = expand_composite(graph_, op, outer, op);
      } else {
        nodes[i].flat_op = out_.flat_op[i] = add_primitive(graph_, op, outer, op);
      }
    }
    add_edges(graph_, nodes, "");
    out_.graph = std::move(builder_).build();
    return std::move(out_);
  }

 private:
  // How a graph's streams and tensors map into the flat graph, and which of its tensors are
  // read without waiting because the composite binding them reads them so.
  struct Scope {
    std::vector<StreamId> streams;
    std::vector<TensorId> tensors;
    std::vector<std::uint8_t> weak;
    std::string prefix;
  };

  Scope outer_scope() const {
    Scope scope;
    for (std::size_t s = 0; s < graph_.stream_count(); ++s) scope.streams.push_back(StreamId::at(s));
    for (std::size_t t = 0; t < graph_.tensor_count(); ++t) scope.tensors.push_back(TensorId::at(t));
    scope.weak.assign(graph_.tensor_count(), 0);
    return scope;
  }

  OpId add_primitive(const Graph& graph, OpId op, const Scope& scope, OpId original) {
    const std::string name =
        scope.prefix.empty() ? std::string(graph.op_name(op)) : qualified(scope.prefix, graph.op_name(op));
    const OpId flat =
        builder_.add_op(name, builder_.intern_work(graph.op_work(op)), scope.streams[graph.op_stream(op).value()]);
    out_.original_op.push_back(original);
    const auto inputs = graph.op_inputs(op);
    for (std::size_t i = 0; i < inputs.size(); ++i) {
      const std::size_t t = inputs[i].value();
      builder_.add_input(flat, scope.tensors[t], graph.input_is_weak(op, i) || scope.weak[t] != 0);
    }
    for (TensorId tensor : graph.op_outputs(op)) builder_.add_output(flat, scope.tensors[tensor.value()]);
    return flat;
  }

  // Adds the ops of composite `op` of `graph` (seen through `scope`) and returns its expansion.
  std::uint32_t expand_composite(const Graph& graph, OpId op, const Scope& scope, OpId original) {
    const CompositeId composite = graph.op_composite(op);
    const Subgraph& subgraph = graph.subgraph(graph.composite(composite).subgraph);
    const Graph& inner = subgraph.graph();
    Scope nested;
    nested.prefix = scope.prefix.empty() ? graph.display_name(op) : qualified(scope.prefix, graph.display_name(op));
    for (StreamId stream : graph.composite_streams(composite)) nested.streams.push_back(scope.streams[stream.value()]);
    nested.tensors.assign(inner.tensor_count(), TensorId::none());
    nested.weak.assign(inner.tensor_count(), 0);
    const auto inputs = graph.op_inputs(op);
    for (std::size_t p = 0; p < inputs.size(); ++p) {
      const std::size_t t = subgraph.inputs()[p].value();
      nested.tensors[t] = scope.tensors[inputs[p].value()];
      nested.weak[t] = graph.input_is_weak(op, p) || scope.weak[inputs[p].value()] != 0;
    }
    const auto outputs = graph.op_outputs(op);
    for (std::size_t p = 0; p < outputs.size(); ++p) {
      nested.tensors[subgraph.outputs()[p].value()] = scope.tensors[outputs[p].value()];
    }
    // The device of each template device, through the streams bound to it.
    std::vector<DeviceId> devices(inner.device_count(), DeviceId::none());
    for (std::size_t s = 0; s < inner.stream_count(); ++s) {
      devices[inner.stream(StreamId::at(s)).device.value()] = device_of_stream(nested.streams[s]);
    }
    for (const auto* ports : {&subgraph.inputs(), &subgraph.outputs()}) {
      for (TensorId port : *ports) bind_members(subgraph, port, nested, devices);
    }
    for (std::size_t t = 0; t < inner.tensor_count(); ++t) {
      if (nested.tensors[t].valid()) continue;
      const TensorRecord& tensor = inner.tensor(TensorId::at(t));
      nested.tensors[t] = builder_.add_tensor(qualified(nested.prefix, inner.tensor_name(TensorId::at(t))),
                                              devices[tensor.device.value()], tensor.kind, tensor.bytes);
    }

    const auto index = static_cast<std::uint32_t>(out_.expansions.size());
    out_.expansions.push_back({&subgraph, {}, {}});
    std::vector<Node> nodes(inner.op_count());
    std::vector<OpId> flat_ops(inner.op_count(), OpId::none());
    std::vector<std::uint32_t> children(inner.op_count(), FlatGraph::kNoChild);
    for (std::size_t i = 0; i < inner.op_count(); ++i) {
      const OpId inner_op = OpId::at(i);
      if (inner.is_composite(inner_op)) {
        nodes[i].expansion = children[i] = expand_composite(inner, inner_op, nested, original);
      } else {
        nodes[i].flat_op = flat_ops[i] = add_primitive(inner, inner_op, nested, original);
      }
    }
    out_.expansions[index].flat_op = std::move(flat_ops);
    out_.expansions[index].child = std::move(children);
    add_edges(inner, nodes, nested.prefix);
    return index;
  }

  DeviceId device_of_stream(StreamId stream) const { return graph_.stream(stream).device; }

  // A bundle's members become tensors of the flat graph, made by whichever of its producer and
  // its reader is expanded first; the other maps its members onto them, one by one.
  void bind_members(const Subgraph& subgraph, TensorId port, Scope& nested, const std::vector<DeviceId>& devices) {
    const auto members = subgraph.bundle_members(port);
    if (members.empty()) return;
    const Graph& inner = subgraph.graph();
    std::vector<TensorId>& flat = members_of_bundle_[nested.tensors[port.value()].value()];
    for (std::size_t m = flat.size(); m < members.size(); ++m) {
      const TensorRecord& member = inner.tensor(members[m]);
      flat.push_back(builder_.add_tensor(qualified(nested.prefix, inner.tensor_name(members[m])),
                                         devices[member.device.value()], member.kind, member.bytes));
    }
    for (std::size_t m = 0; m < members.size(); ++m) nested.tensors[members[m].value()] = flat[m];
  }

  // Control edges, signal edges and collectives among `nodes`, the ops of `graph`.
  void add_edges(const Graph& graph, const std::vector<Node>& nodes, const std::string& prefix) {
    for (std::size_t i = 0; i < graph.op_count(); ++i) {
      const OpId op = OpId::at(i);
      for (OpId successor : graph.control_successors(op)) connect(nodes[i], nodes[successor.value()]);
      if (const CompositeId composite = graph.op_composite(op); composite.valid()) {
        const Subgraph& subgraph = graph.subgraph(graph.composite(composite).subgraph);
        for (const auto& [signal, successor] : graph.signal_successors(composite)) {
          connect(signal_node(subgraph, nodes[i].expansion, signal), nodes[successor.value()]);
        }
      }
    }
    for (std::size_t c = 0; c < graph.collective_count(); ++c) {
      std::vector<OpId> members;
      for (OpId member : graph.collective_members(CollectiveId::at(c)))
        members.push_back(nodes[member.value()].flat_op);
      builder_.add_collective(qualified(prefix, graph.collective_name(CollectiveId::at(c))), members);
    }
  }

  // The node whose end is signal `signal` of expansion `expansion` of `subgraph`: an op inside, or
  // a composite inside, or, when the signal is one of that composite's, the node behind it.
  Node signal_node(const Subgraph& subgraph, std::uint32_t expansion, std::uint32_t signal) const {
    const Subgraph::Signal& port = subgraph.signals()[signal];
    const FlatGraph::Expansion& expanded = out_.expansions[expansion];
    const std::size_t op = port.op.value();
    if (port.inner < 0) return {expanded.flat_op[op], expanded.child[op]};
    const Graph& inner = subgraph.graph();
    const Subgraph& nested = inner.subgraph(inner.composite(inner.op_composite(port.op)).subgraph);
    return signal_node(nested, expanded.child[op], static_cast<std::uint32_t>(port.inner));
  }

  void connect(const Node& from, const Node& to) {
    const std::vector<OpId>& targets = ends(to, true);
    if (from.expansion == FlatGraph::kNoChild) {
      for (OpId after : targets) builder_.add_control_edge(from.flat_op, after);
      return;
    }
    for (OpId before : ends(from, false)) {
      for (OpId after : targets) builder_.add_control_edge(before, after);
    }
  }

  // The flat ops through which `node` starts (the first op on each of its streams) or ends (all
  // of its ops: an op inside may wait for a composite inside to free one stream while another
  // stream of it still runs).
  // Found once per expansion: a composite may have many edges.
  const std::vector<OpId>& ends(const Node& node, bool starts) {
    if (node.expansion == FlatGraph::kNoChild) {
      single_ = {node.flat_op};
      return single_;
    }
    std::vector<std::vector<OpId>>& known = starts ? starts_of_expansion_ : ends_of_expansion_;
    if (known.size() <= node.expansion) known.resize(out_.expansions.size());
    std::vector<OpId>& found = known[node.expansion];
    if (found.empty()) collect_ends(node, starts, found);
    return found;
  }

  void collect_ends(const Node& node, bool starts, std::vector<OpId>& found) const {
    if (node.expansion == FlatGraph::kNoChild) {
      found.push_back(node.flat_op);
      return;
    }
    const FlatGraph::Expansion& expansion = out_.expansions[node.expansion];
    if (starts) {
      // The first op on each of its streams: every op of the template runs after one of them,
      // so an edge to them all makes the whole template wait, as a composite does.
      for (std::size_t s = 0; s < expansion.subgraph->stream_entries().size(); ++s)
        found.push_back(first_on_stream(node.expansion, s));
      return;
    }
    const Graph& inner = expansion.subgraph->graph();
    for (std::size_t i = 0; i < inner.op_count(); ++i) {
      collect_ends({expansion.flat_op[i], expansion.child[i]}, false, found);
    }
  }

  // The flat op issued first on template stream `stream` of expansion `expansion`.
  OpId first_on_stream(std::uint32_t expansion, std::size_t stream) const {
    const FlatGraph::Expansion& expanded = out_.expansions[expansion];
    const OpId first = expanded.subgraph->stream_entries()[stream].first_op;
    if (expanded.child[first.value()] == FlatGraph::kNoChild) return expanded.flat_op[first.value()];
    const Graph& inner = expanded.subgraph->graph();
    const auto bound = inner.composite_streams(inner.op_composite(first));
    const auto j = std::find(bound.begin(), bound.end(), StreamId::at(stream)) - bound.begin();
    return first_on_stream(expanded.child[first.value()], static_cast<std::size_t>(j));
  }

  const Graph& graph_;
  GraphBuilder builder_;
  FlatGraph out_;
  std::vector<std::vector<OpId>> starts_of_expansion_;
  std::vector<std::vector<OpId>> ends_of_expansion_;
  std::vector<OpId> single_;
  std::unordered_map<TensorId::value_type, std::vector<TensorId>> members_of_bundle_;  // by flat bundle tensor
};

}  // namespace

FlatGraph flatten(const Graph& graph) { return Flattener(graph).run(); }

}  // namespace weft
