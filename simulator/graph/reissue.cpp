#include "simulator/graph/reissue.hpp"

#include <algorithm>
#include <queue>
#include <string>

#include "simulator/core/input_error.hpp"
#include "simulator/graph/graph_builder.hpp"
#include "simulator/graph/subgraph.hpp"

namespace weft {
namespace {

template <class Id>
Id id_at(std::size_t i) {
  return Id(static_cast<typename Id::value_type>(i));
}

}  // namespace

StreamOrder issue_order(const Graph& graph) {
  StreamOrder issued(graph.stream_count());
  for (std::size_t i = 0; i < graph.op_count(); ++i) {
    const OpId op = id_at<OpId>(i);
    for (StreamId stream : op_streams(graph, op)) {
      if (graph.stream(stream).policy == StreamPolicy::in_order) issued[stream.value()].push_back(op);
    }
  }
  return issued;
}

namespace {

// Every stream's new issue order, checked to hold each of its ops once.
StreamOrder new_issue_orders(const Graph& graph, const StreamOrder& order) {
  StreamOrder issued = issue_order(graph);
  if (order.size() > graph.stream_count()) throw InputError("stream order: more streams than the graph has");
  for (std::size_t s = 0; s < order.size(); ++s) {
    if (order[s].empty()) continue;
    std::vector<OpId> given = order[s];
    std::vector<OpId> expected = issued[s];
    std::sort(given.begin(), given.end());
    std::sort(expected.begin(), expected.end());
    if (given != expected) {
      throw InputError("stream order of '" + graph.stream(id_at<StreamId>(s)).name +
                       "': expected each op the stream issues, once");
    }
    issued[s] = order[s];
  }
  return issued;
}

// An order to add the ops in: each stream's ops in its new order; among the ops at the head of
// all of their streams, the lowest original id first.
std::vector<OpId> add_order(const Graph& graph, const StreamOrder& issue) {
  std::vector<std::size_t> head(issue.size(), 0);
  std::vector<std::uint32_t> heads_reached(graph.op_count(), 0);
  std::vector<std::uint32_t> streams_of(graph.op_count(), 0);
  for (const auto& ops : issue) {
    for (OpId op : ops) ++streams_of[op.value()];
  }
  std::priority_queue<std::uint32_t, std::vector<std::uint32_t>, std::greater<>> ready;
  for (std::size_t i = 0; i < graph.op_count(); ++i) {
    if (streams_of[i] == 0) ready.push(static_cast<std::uint32_t>(i));
  }
  auto reach_head = [&](std::size_t stream) {
    if (head[stream] >= issue[stream].size()) return;
    const OpId op = issue[stream][head[stream]];
    if (++heads_reached[op.value()] == streams_of[op.value()]) ready.push(op.value());
  };
  for (std::size_t s = 0; s < issue.size(); ++s) reach_head(s);
  std::vector<OpId> order;
  order.reserve(graph.op_count());
  while (!ready.empty()) {
    const OpId op = id_at<OpId>(ready.top());
    ready.pop();
    order.push_back(op);
    for (StreamId stream : op_streams(graph, op)) {
      if (graph.stream(stream).policy != StreamPolicy::in_order) continue;
      ++head[stream.value()];
      reach_head(stream.value());
    }
  }
  if (order.size() != graph.op_count()) {
    throw InputError("stream order: a composite has different places among the ops of its streams");
  }
  return order;
}

// The graph's devices, streams, templates and tensors, with the same ids.
GraphBuilder builder_without_ops(const Graph& graph) {
  GraphBuilder builder;
  for (std::size_t s = 0; s < graph.device_spec_count(); ++s) builder.add_device_spec(graph.spec(id_at<DeviceSpecId>(s)));
  for (std::size_t d = 0; d < graph.device_count(); ++d) {
    const DeviceInfo& device = graph.device(id_at<DeviceId>(d));
    builder.set_memory_capacity(builder.add_device(device.name, device.spec), device.memory_capacity);
  }
  for (std::size_t s = 0; s < graph.stream_count(); ++s) {
    const StreamInfo& stream = graph.stream(id_at<StreamId>(s));
    builder.add_stream(stream.device, stream.name, stream.policy);
  }
  for (const auto& subgraph : graph.subgraphs()) builder.add_subgraph(subgraph);
  for (std::size_t t = 0; t < graph.tensor_count(); ++t) {
    const TensorId tensor = id_at<TensorId>(t);
    const TensorRecord& record = graph.tensor(tensor);
    builder.add_tensor(graph.tensor_name(tensor), record.device, record.kind, record.bytes);
  }
  return builder;
}

}  // namespace

ReissuedGraph reissue(const Graph& graph, const StreamOrder& order, std::span<const std::pair<OpId, OpId>> edges) {
  const std::vector<OpId> sequence = add_order(graph, new_issue_orders(graph, order));
  GraphBuilder builder = builder_without_ops(graph);
  ReissuedGraph out;
  out.op_of.assign(graph.op_count(), OpId::none());
  std::vector<std::uint8_t> weak;
  for (OpId op : sequence) {
    const auto inputs = graph.op_inputs(op);
    const auto outputs = graph.op_outputs(op);
    weak.assign(inputs.size(), 0);
    for (std::size_t i = 0; i < inputs.size(); ++i) weak[i] = graph.input_is_weak(op, i) ? 1 : 0;
    if (const CompositeId composite = graph.op_composite(op); composite.valid()) {
      out.op_of[op.value()] = builder.add_composite(graph.op_name(op), graph.composite(composite).subgraph,
                                                    graph.composite_streams(composite), inputs, outputs, weak);
      continue;
    }
    const OpId added = builder.add_op(graph.op_name(op), builder.intern_work(graph.op_work(op)), graph.op_stream(op));
    for (std::size_t i = 0; i < inputs.size(); ++i) builder.add_input(added, inputs[i], weak[i] != 0);
    for (TensorId tensor : outputs) builder.add_output(added, tensor);
    out.op_of[op.value()] = added;
  }
  for (std::size_t i = 0; i < graph.op_count(); ++i) {
    const OpId op = id_at<OpId>(i);
    for (OpId successor : graph.control_successors(op)) {
      builder.add_control_edge(out.op_of[i], out.op_of[successor.value()]);
    }
    if (const CompositeId composite = graph.op_composite(op); composite.valid()) {
      for (const auto& [signal, successor] : graph.signal_successors(composite)) {
        builder.add_signal_edge(out.op_of[i], signal, out.op_of[successor.value()]);
      }
    }
  }
  for (const auto& [before, after] : edges) {
    if (!before.valid() || before.value() >= graph.op_count() || !after.valid() || after.value() >= graph.op_count())
      throw InputError("added edge: unknown op");
    builder.add_control_edge(out.op_of[before.value()], out.op_of[after.value()]);
  }
  for (std::size_t c = 0; c < graph.collective_count(); ++c) {
    const CollectiveId collective = id_at<CollectiveId>(c);
    std::vector<OpId> members;
    for (OpId member : graph.collective_members(collective)) members.push_back(out.op_of[member.value()]);
    builder.add_collective(graph.collective_name(collective), members);
  }
  out.graph = std::move(builder).build();
  return out;
}

StreamOrder stream_order_of(const Graph& graph, std::span<const OpId> ranking) {
  if (ranking.size() != graph.op_count()) throw InputError("ranking: expected every op once");
  std::vector<std::uint32_t> position(graph.op_count(), UINT32_MAX);
  for (std::size_t i = 0; i < ranking.size(); ++i) {
    if (!ranking[i].valid() || ranking[i].value() >= graph.op_count() || position[ranking[i].value()] != UINT32_MAX)
      throw InputError("ranking: expected every op once");
    position[ranking[i].value()] = static_cast<std::uint32_t>(i);
  }
  StreamOrder order = issue_order(graph);
  for (auto& ops : order) {
    std::sort(ops.begin(), ops.end(), [&](OpId a, OpId b) { return position[a.value()] < position[b.value()]; });
  }
  return order;
}

}  // namespace weft
