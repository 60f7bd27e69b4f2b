#include "simulator/graph/reissue.hpp"

#include <algorithm>
#include <queue>
#include <string>
#include <utility>

#include "simulator/core/input_error.hpp"
#include "simulator/graph/graph_builder.hpp"
#include "simulator/graph/subgraph.hpp"

namespace weft {
StreamOrder issue_order(const Graph& graph) {
  StreamOrder issued(graph.stream_count());
  for (std::size_t i = 0; i < graph.op_count(); ++i) {
    const OpId op = OpId::at(i);
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
  std::vector<std::uint32_t> expected_on(graph.op_count(), UINT32_MAX);  // the stream being checked
  for (std::size_t s = 0; s < order.size(); ++s) {
    if (order[s].empty()) continue;
    const auto tag = static_cast<std::uint32_t>(s);
    for (OpId op : issued[s]) expected_on[op.value()] = tag;
    bool once_each = order[s].size() == issued[s].size();
    for (std::size_t i = 0; i < order[s].size() && once_each; ++i) {
      const OpId op = order[s][i];
      once_each = op.valid() && op.value() < graph.op_count() && expected_on[op.value()] == tag;
      if (once_each) expected_on[op.value()] = UINT32_MAX;  // taken
    }
    if (!once_each) {
      throw InputError("stream order of '" + graph.stream(StreamId::at(s)).name +
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
    const OpId op = OpId::at(ready.top());
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

}  // namespace

ReissuedGraph reissue(const Graph& graph, const StreamOrder& order, std::span<const std::pair<OpId, OpId>> edges) {
  const std::vector<OpId> sequence = add_order(graph, new_issue_orders(graph, order));
  ReissuedGraph out;
  out.op_of.assign(graph.op_count(), OpId::none());
  for (std::size_t i = 0; i < sequence.size(); ++i) out.op_of[sequence[i].value()] = OpId::at(i);
  std::vector<std::pair<OpId, OpId>> added;
  added.reserve(edges.size());
  for (const auto& [before, after] : edges) {
    if (!before.valid() || before.value() >= graph.op_count() || !after.valid() || after.value() >= graph.op_count())
      throw InputError("added edge: unknown op");
    added.emplace_back(out.op_of[before.value()], out.op_of[after.value()]);
  }
  out.graph = GraphBuilder::renumbered(graph, sequence, out.op_of, added);
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
