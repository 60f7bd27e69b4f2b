#pragma once

#include <vector>

#include "simulator/engine/simulation_result.hpp"
#include "simulator/graph/graph.hpp"
#include "simulator/graph/subgraph.hpp"

namespace weft {

// One primitive op of a simulated graph, composites expanded: the op in the graph that holds it
// (the simulated graph or a template), the stream of the simulated graph it ran on and its times.
struct ExpandedOp {
  const Graph* owner;
  OpId op;
  StreamId stream;
  TimeNs start;
  TimeNs end;
};

namespace detail {

template <class Fn>
void expand_composite(const Graph& owner, OpId op, const std::vector<StreamId>& outer_streams, TimeNs start,
                      const TemplateSchedule& schedule, Fn& fn) {
  const CompositeId composite = owner.op_composite(op);
  const Graph& inner = owner.subgraph(owner.composite(composite).subgraph).graph();
  std::vector<StreamId> streams;
  for (StreamId stream : owner.composite_streams(composite)) streams.push_back(outer_streams[stream.value()]);
  const TimeNs origin = start - schedule.earliest_start;
  for (std::size_t i = 0; i < inner.op_count(); ++i) {
    const OpId inner_op(static_cast<OpId::value_type>(i));
    const TimeNs op_start = origin + schedule.op_start[i];
    if (schedule.nested[i]) {
      expand_composite(inner, inner_op, streams, op_start, *schedule.nested[i], fn);
    } else {
      fn(ExpandedOp{&inner, inner_op, streams[inner.op_stream(inner_op).value()], op_start,
                    origin + schedule.op_end[i]});
    }
  }
}

}  // namespace detail

// Calls fn(ExpandedOp) for every primitive op of a template simulated as `schedule` (nested
// templates expanded), with times relative to the schedule's origin and the template's streams.
template <class Fn>
void for_each_template_op(const Subgraph& subgraph, const TemplateSchedule& schedule, Fn&& fn) {
  const Graph& graph = subgraph.graph();
  std::vector<StreamId> identity;
  for (std::size_t s = 0; s < graph.stream_count(); ++s)
    identity.push_back(StreamId(static_cast<StreamId::value_type>(s)));
  for (std::size_t i = 0; i < graph.op_count(); ++i) {
    const OpId op(static_cast<OpId::value_type>(i));
    if (schedule.nested[i]) {
      detail::expand_composite(graph, op, identity, schedule.op_start[i], *schedule.nested[i], fn);
    } else {
      fn(ExpandedOp{&graph, op, graph.op_stream(op), schedule.op_start[i], schedule.op_end[i]});
    }
  }
}

// Calls fn(ExpandedOp) for every primitive op, in the order flatten() creates them.
template <class Fn>
void for_each_expanded_op(const Graph& graph, const SimulationResult& result, Fn&& fn) {
  std::vector<StreamId> identity;
  for (std::size_t s = 0; s < graph.stream_count(); ++s)
    identity.push_back(StreamId(static_cast<StreamId::value_type>(s)));
  for (std::size_t i = 0; i < graph.op_count(); ++i) {
    const OpId op(static_cast<OpId::value_type>(i));
    if (const CompositeId composite = graph.op_composite(op); composite.valid()) {
      detail::expand_composite(graph, op, identity, result.start(op), *result.composite_schedules[composite.value()],
                               fn);
    } else {
      fn(ExpandedOp{&graph, op, graph.op_stream(op), result.start(op), result.end(op)});
    }
  }
}

}  // namespace weft
