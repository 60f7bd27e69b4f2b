#include "simulator/engine/template_schedule.hpp"

#include <algorithm>
#include <limits>

#include "simulator/graph/subgraph.hpp"

namespace weft {
namespace {

// When the template's composite `op` (nested inside) has its origin.
TimeNs nested_origin(const TemplateSchedule& schedule, std::size_t op) {
  return schedule.op_start[op] - schedule.nested[op]->earliest_start;
}

// The index of `tensor` among `tensors`.
std::size_t index_of(std::span<const TensorId> tensors, TensorId tensor) {
  return static_cast<std::size_t>(std::find(tensors.begin(), tensors.end(), tensor) - tensors.begin());
}

}  // namespace

void derive_boundary_times(const Subgraph& subgraph, TemplateSchedule& schedule) {
  const Graph& graph = subgraph.graph();
  schedule.earliest_start = std::numeric_limits<TimeNs>::max();
  schedule.span = 0;
  schedule.stream_release.assign(graph.stream_count(), 0);
  schedule.stream_first_start.assign(graph.stream_count(), -1);
  for (std::size_t i = 0; i < graph.op_count(); ++i) {
    const OpId op(static_cast<OpId::value_type>(i));
    schedule.earliest_start = std::min(schedule.earliest_start, schedule.op_start[i]);
    schedule.span = std::max(schedule.span, schedule.op_end[i]);
    // Ops are issued in id order, so the last op on a stream writes its release last.
    const auto streams = op_streams(graph, op);
    for (std::size_t j = 0; j < streams.size(); ++j) {
      const TemplateSchedule* nested = schedule.nested[i].get();
      const TimeNs origin = nested != nullptr ? nested_origin(schedule, i) : 0;
      TimeNs& first_start = schedule.stream_first_start[streams[j].value()];
      if (first_start < 0)
        first_start = nested != nullptr ? origin + nested->stream_first_start[j] : schedule.op_start[i];
      schedule.stream_release[streams[j].value()] =
          nested != nullptr ? origin + nested->stream_release[j] : schedule.op_end[i];
    }
  }
  if (graph.op_count() == 0) schedule.earliest_start = 0;

  // The last end of the readers of `tensor` inside, or -1 without any.
  auto last_read = [&](TensorId tensor) {
    TimeNs last = -1;
    for (OpId reader : graph.tensor_consumers(tensor)) {
      const std::size_t i = reader.value();
      if (!schedule.nested[i]) {
        last = std::max(last, schedule.op_end[i]);
        continue;
      }
      const auto inputs = graph.op_inputs(reader);
      for (std::size_t q = 0; q < inputs.size(); ++q) {
        if (inputs[q] == tensor)
          last = std::max(last, nested_origin(schedule, i) + schedule.nested[i]->input_release[q]);
      }
    }
    return last;
  };
  schedule.input_release.clear();
  schedule.member_release.assign(subgraph.inputs().size(), {});
  for (std::size_t p = 0; p < subgraph.inputs().size(); ++p) {
    const TensorId tensor = subgraph.inputs()[p];
    TimeNs release = last_read(tensor);
    for (TensorId member : subgraph.bundle_members(tensor)) {
      schedule.member_release[p].push_back(last_read(member));
      release = std::max(release, schedule.member_release[p].back());
    }
    schedule.input_release.push_back(release);
  }
  // When `tensor`, made inside, is allocated and ready, and when its producer's template last
  // reads it inside (-1 if it does not or is primitive).
  struct Made {
    TimeNs alloc, ready, read_by_producer;
  };
  auto made = [&](TensorId tensor) -> Made {
    const OpId producer = graph.tensor_producer(tensor);
    const std::size_t i = producer.value();
    if (!schedule.nested[i]) return {schedule.op_start[i], schedule.op_end[i], -1};
    const std::size_t q = index_of(graph.op_outputs(producer), tensor);
    const TemplateSchedule& nested = *schedule.nested[i];
    const TimeNs origin = nested_origin(schedule, i);
    const TimeNs read = nested.output_release[q];
    return {origin + nested.output_alloc[q], origin + nested.output_ready[q], read >= 0 ? origin + read : -1};
  };
  schedule.output_alloc.clear();
  schedule.output_ready.clear();
  schedule.output_release.clear();
  schedule.member_ready.assign(subgraph.outputs().size(), {});
  schedule.member_read_inside.assign(subgraph.outputs().size(), {});
  for (std::size_t p = 0; p < subgraph.outputs().size(); ++p) {
    const TensorId tensor = subgraph.outputs()[p];
    if (!graph.tensor_producer(tensor).valid()) {  // a bundle: its members are made inside
      TimeNs alloc = 0;
      TimeNs ready = 0;
      for (TensorId member : subgraph.bundle_members(tensor)) {
        const Made m = made(member);
        alloc = schedule.member_ready[p].empty() ? m.alloc : std::min(alloc, m.alloc);
        ready = std::max(ready, m.ready);
        if (const TimeNs read = std::max(last_read(member), m.read_by_producer); read >= 0) {
          const auto index = static_cast<std::uint32_t>(schedule.member_ready[p].size());
          schedule.member_read_inside[p].emplace_back(index, read);
        }
        schedule.member_ready[p].push_back(m.ready);
      }
      schedule.output_alloc.push_back(alloc);
      schedule.output_ready.push_back(ready);
      schedule.output_release.push_back(-1);
      continue;
    }
    const Made m = made(tensor);
    schedule.output_alloc.push_back(m.alloc);
    schedule.output_ready.push_back(m.ready);
    schedule.output_release.push_back(std::max(last_read(tensor), m.read_by_producer));
  }
  schedule.signal_time.clear();
  for (const Subgraph::Signal& signal : subgraph.signals()) {
    const std::size_t i = signal.op.value();
    schedule.signal_time.push_back(signal.inner < 0
                                       ? schedule.op_end[i]
                                       : nested_origin(schedule, i) +
                                             schedule.nested[i]->signal_time[static_cast<std::size_t>(signal.inner)]);
  }
}

}  // namespace weft
