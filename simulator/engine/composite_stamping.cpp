// Stamping a composite op: its template's schedule placed at the composite's origin (ports,
// signals, stream releases and its end as events; memory and busy time as the device effects
// of the schedule), after checking that this gives the times of its ops simulated one by one.
#include <algorithm>
#include <memory>

#include "simulator/engine/simulation_state.hpp"
#include "simulator/engine/template_scheduler.hpp"

namespace weft::simulation_detail {

// Stamps the template's schedule for a composite whose dependencies are all met. Its ops
// could start at `origin`, when the last dependency that gates them completed; streams bound
// as secondary ones may free later, which shifts the schedule (part of its cache key).
template <bool kComposites>
void Simulation<kComposites>::start_composite(OpId op) {
  const CompositeId composite = graph_.op_composite(op);
  const Subgraph& subgraph = graph_.subgraph(graph_.composite(composite).subgraph);
  const auto streams = graph_.composite_streams(composite);
  const TimeNs origin = gate_time_[composite.value()];
  offsets_.assign(streams.size(), 0);
  for (std::size_t j = 1; j < streams.size(); ++j) {
    offsets_[j] = std::max<TimeNs>(0, stream_free_[streams[j].value()] - origin);
  }
  host_offsets_.assign(streams.size(), kHostAhead);
  if (!composite_host_issued_.empty()) {
    for (std::size_t j = 0; j < streams.size(); ++j) {
      const TimeNs issued = composite_host_issued_[graph_.composite(composite).binding_begin + j];
      if (issued != kHostAhead) host_offsets_[j] = issued - origin;
    }
  }
  std::shared_ptr<const TemplateSchedule> schedule = templates_.schedule(subgraph, offsets_, host_offsets_);
  const TemplateSchedule& times = *schedule;
  check_exact(op, subgraph, times, origin);

  result_.op_start[op.value()] = origin + times.earliest_start;
  result_.op_end[op.value()] = origin + times.span;
  composite_end_ = std::max(composite_end_, origin + times.span);
  stamp_device_effects(streams, subgraph, times, origin);

  // The template's memory profile assumes that its input ports die when it last reads them and
  // its output ports are allocated when produced (for ports whose kind counts); where this
  // instance differs, a change at the same instant cancels the assumed one.
  const auto inputs = graph_.op_inputs(op);
  for (std::size_t p = 0; p < inputs.size(); ++p) {
    const TimeNs assumed = origin + times.input_release[p];
    const TimeNs actual = release_time(inputs[p], assumed);
    if (actual == assumed && subgraph.port_counts_memory(subgraph.inputs()[p])) continue;
    const TensorRecord& record = graph_.tensor(inputs[p]);
    if (subgraph.port_counts_memory(subgraph.inputs()[p])) memory_change(record.device, assumed, record.bytes);
    if (actual != kUnknown) memory_change(record.device, actual, -record.bytes);
  }
  for (std::uint32_t q : subgraph.bundle_inputs()) settle_members(inputs[q], origin, &times.member_release[q]);
  const auto outputs = graph_.op_outputs(op);
  for (std::size_t p = 0; p < outputs.size(); ++p) {
    const TensorId tensor = outputs[p];
    const TensorRecord& record = graph_.tensor(tensor);
    const bool assumed = subgraph.port_counts_memory(subgraph.outputs()[p]);
    if (assumed != counts_memory(tensor, record)) {
      memory_change(record.device, origin + times.output_alloc[p], assumed ? -record.bytes : record.bytes);
    }
    tensor_ready_[tensor.value()] = origin + times.output_ready[p];
    if (times.output_release[p] >= 0) account_reader(tensor, origin + times.output_release[p]);
    if (!graph_.tensor_consumers(tensor).empty()) push_event(origin + times.output_ready[p], op, kPort, p);
  }
  const auto signal_edges = graph_.signal_successors(composite);
  for (std::size_t e = 0; e < signal_edges.size(); ++e)
    push_event(origin + times.signal_time[signal_edges[e].first], op, kSignal, e);
  const auto next = graph_.composite_next(composite);
  for (std::size_t j = 0; j < streams.size(); ++j) {
    const TimeNs release_at = origin + times.stream_release[j];
    stream_free_[streams[j].value()] = stream_frees(release_at, streams[j]);
    if (!next[j].valid()) continue;
    if (runs_as_secondary(next[j], streams[j])) {
      if (--pending_[next[j].value()] == 0) start_composite(next[j]);
    } else {
      push_event(release_at, op, kRelease, j);
    }
  }
  if (!graph_.composite_control_successors(composite).empty()) push_event(origin + times.span, op, kDone, 0);
  result_.composite_schedules[composite.value()] = std::move(schedule);
  for (TensorId output : outputs) {
    if (graph_.tensor_kind(output) == TensorKind::bundle && graph_.tensor_consumers(output).empty())
      settle_members(output, 0, nullptr);
  }
}

template <bool kComposites>
inline void Simulation<kComposites>::push_event(TimeNs at, OpId op, EventKind kind, std::size_t index) {
  running_.push(static_cast<std::uint64_t>(at), make_event(op, kind, static_cast<std::uint32_t>(index)));
}

// Stamping is exact when the template's ops run at the times they would run if simulated one
// by one, and nothing is stamped into the past. An op inside waits for the ports it reads and
// for the op before it on its stream; the first ops inside also for the control and signal
// edges into the composite. So the first op on each stream, unless something inside gates it,
// could have started before `origin` (the latest of the composite's gates) if its stream, its
// ports and those edges were done earlier.
template <bool kComposites>
inline void Simulation<kComposites>::check_exact(OpId op, const Subgraph& subgraph, const TemplateSchedule& times,
                                                 TimeNs origin) const {
  if (origin + times.earliest_start < now_) throw ReuseNotExact{};
  const CompositeId composite = graph_.op_composite(op);
  const auto inputs = graph_.op_inputs(op);
  const auto streams = graph_.composite_streams(composite);
  TimeNs gates_done = 0;
  for (const auto& [before, signal] : graph_.composite_gates(composite))
    gates_done = std::max(gates_done, done_time(before, signal));
  const auto& entries = subgraph.stream_entries();
  for (std::size_t j = 0; j < entries.size(); ++j) {
    const Subgraph::StreamEntry& entry = entries[j];
    if (!entry.first_op.valid() || entry.gated_inside) continue;
    TimeNs earliest = std::max(stream_free_[streams[j].value()], gates_done);
    for (std::uint32_t port : entry.input_ports) earliest = std::max(earliest, tensor_ready_[inputs[port].value()]);
    for (const auto& [port, member] : entry.input_members) {
      earliest = std::max(earliest, member_ready(inputs[port], member));
    }
    if (earliest < origin) throw ReuseNotExact{};
  }
  // A weak input must be there when the template starts: when exactly it is read inside is
  // the expanded simulation's to check.
  for (std::size_t p = 0; p < inputs.size(); ++p) {
    const TimeNs ready = tensor_ready_[inputs[p].value()];
    if (graph_.input_is_weak(op, p) && (ready == kUnknown || ready > origin)) throw ReuseNotExact{};
  }
}

template <bool kComposites>
inline auto Simulation<kComposites>::source_of(TensorId bundle) const -> BundleSource {
  const OpId producer = graph_.tensor_producer(bundle);
  const CompositeId composite = graph_.op_composite(producer);
  const TemplateSchedule* times = result_.composite_schedules[composite.value()].get();
  const auto outputs = graph_.op_outputs(producer);
  const auto port = static_cast<std::size_t>(std::find(outputs.begin(), outputs.end(), bundle) - outputs.begin());
  return {result_.op_start[producer.value()] - times->earliest_start, times, port,
          &graph_.subgraph(graph_.composite(composite).subgraph)};
}

// When member `member` of bundle `bundle` is (or will be) produced.
template <bool kComposites>
inline TimeNs Simulation<kComposites>::member_ready(TensorId bundle, std::uint32_t member) const {
  const BundleSource source = source_of(bundle);
  return source.origin + source.times->member_ready[source.port][member];
}

// A bundle's members die when the reader's template last reads them (its profile frees them
// then), unless the producer's template reads one later, or the reader (none: `released` is
// null) never does: then it dies when the producer is done with it.
template <bool kComposites>
inline void Simulation<kComposites>::settle_members(TensorId bundle, TimeNs reader_origin,
                                                    const std::vector<TimeNs>* released) {
  const BundleSource source = source_of(bundle);
  const auto& read_inside = source.times->member_read_inside[source.port];
  const auto members = source.subgraph->bundle_members(source.subgraph->outputs()[source.port]);
  const DeviceId device = graph_.tensor_device(bundle);
  for (const auto& [m, read_end] : read_inside) {
    const TimeNs producer_done = source.origin + read_end;
    const bool read = released != nullptr && (*released)[m] >= 0;
    const TimeNs reader_done = read ? reader_origin + (*released)[m] : kUnknown;
    if (read && reader_done >= producer_done) continue;
    const Bytes bytes = source.subgraph->graph().tensor_bytes(members[m]);
    if (read) memory_change(device, reader_done, bytes);
    memory_change(device, producer_done, -bytes);
  }
}

// When `op` (already started) completes, or for a composite's signal port, when it fires.
template <bool kComposites>
inline TimeNs Simulation<kComposites>::done_time(OpId op, std::int32_t signal) const {
  if (signal < 0) return result_.op_end[op.value()];
  const TemplateSchedule& times = *result_.composite_schedules[graph_.op_composite(op).value()];
  return result_.op_start[op.value()] - times.earliest_start + times.signal_time[static_cast<std::size_t>(signal)];
}

template <bool kComposites>
inline void Simulation<kComposites>::stamp_device_effects(std::span<const StreamId> streams, const Subgraph& subgraph,
                                                          const TemplateSchedule& times, TimeNs origin) {
  const Graph& inner = subgraph.graph();
  for (std::size_t s = 0; s < streams.size(); ++s) {
    // Each template device once, through the first stream bound to it.
    const DeviceId inner_device = inner.stream(StreamId(static_cast<StreamId::value_type>(s))).device;
    bool seen = false;
    for (std::size_t t = 0; t < s && !seen; ++t) {
      seen = inner.stream(StreamId(static_cast<StreamId::value_type>(t))).device == inner_device;
    }
    if (seen) continue;
    const DeviceId device = graph_.stream(streams[s]).device;
    const TemplateSchedule::DeviceEffects& effects = times.devices[inner_device.value()];
    auto& busy = result_.devices[device.value()].busy_by_category;
    for (std::size_t c = 0; c < kOpCategoryCount; ++c) busy[c] += effects.busy_by_category[c];
    if constexpr (kComposites) ledgers_[device.value()].stamp(origin, effects.memory);
    for (const auto& [time, delta] : effects.activity) activity_change(device, origin + time, delta);
  }
}

// The event loop calls start_composite for graphs with composites only.
template void Simulation<true>::start_composite(OpId op);

}  // namespace weft::simulation_detail
