// The engine's event loop (run_simulation): ops become ready, start on their streams, complete
// and release their successors, instant by instant; composites are stamped by
// composite_stamping.cpp.
#include "simulator/engine/simulation.hpp"

#include <algorithm>
#include <limits>
#include <stdexcept>

#include "simulator/engine/critical_path.hpp"
#include "simulator/engine/simulation_state.hpp"
#include "simulator/engine/template_scheduler.hpp"

namespace weft {
namespace simulation_detail {

template <bool kComposites>
inline Simulation<kComposites>::Simulation(const Graph& graph, const CostModel& cost_model,
                                           const SimulationOptions& options, TemplateScheduler& templates,
                                           TemplateRecording* recording)
    : graph_(graph),
      options_(options),
      templates_(templates),
      recording_(recording),
      duration_(graph, cost_model),
      pending_(graph.op_count()),
      remaining_consumers_(graph.tensor_count()),
      collective_ready_(graph.collective_count(), 0),
      streams_(graph.stream_count()),
      activity_(graph.device_count()),
      memory_(kComposites ? 0 : graph.device_count(), DeviceMemoryTracker(options.record_memory_timeline)),
      ledgers_(kComposites ? graph.device_count() : 0),
      tracks_tensor_times_(kComposites || graph.has_weak_inputs()) {
  for (std::size_t s = 0; s < graph.stream_count(); ++s) {
    const StreamInfo& stream = graph.stream(StreamId(static_cast<StreamId::value_type>(s)));
    streams_[s].device = stream.device;
    streams_[s].in_order = stream.policy == StreamPolicy::in_order;
  }
  for (std::size_t w = 0; w < graph.work_count(); ++w) {
    work_category_.push_back(category_of(graph.work(WorkId(static_cast<WorkId::value_type>(w))).op_class));
  }
  result_.op_start.resize(graph.op_count());
  result_.op_end.resize(graph.op_count());
  result_.op_binding.resize(graph.op_count());
  result_.devices.resize(graph.device_count());
  if (tracks_tensor_times_) tensor_ready_.assign(graph.tensor_count(), kUnknown);
  if constexpr (kComposites) {
    result_.composite_schedules.resize(graph.composite_count());
    result_.reused_subgraphs = true;
    gate_time_.assign(graph.composite_count(), 0);
    free_time_.assign(graph.tensor_count(), 0);
    stream_free_.assign(graph.stream_count(), 0);
  }
  if (recording_ != nullptr) recording_->activity.assign(graph.device_count(), {});
}

template <bool kComposites>
inline SimulationResult Simulation<kComposites>::run() {
  allocate_initial_tensors();
  count_readers_inside_composites();
  for (std::size_t i = 0; i < graph_.op_count(); ++i) pending_[i] = graph_.dependency_count(op_id(i));
  delay_streams_not_yet_available();
  schedule_host_issue();
  // Starting an op can make a composite ready at once (one running the op's stream as a
  // secondary stream), so the ops ready at the outset are listed before any starts.
  std::vector<OpId> ready_at_start;
  for (std::size_t i = 0; i < graph_.op_count(); ++i) {
    if (pending_[i] == 0) ready_at_start.push_back(op_id(i));
  }
  for (OpId op : ready_at_start) on_ready(op, 0);
  // Each instant: the completions at that time, in canonical order, then the first_ready
  // streams choose among all the ops that became ready. Zero-duration ops started by either
  // complete at the same instant, in a further pass. Handling completions in a fixed order
  // makes each op's binding (its last dependency to complete) independent of the event queue.
  std::vector<Event> completed;
  while (true) {
    Event event;
    while (running_.pop_if_key(static_cast<std::uint64_t>(now_), event)) completed.push_back(event);
    if (!completed.empty()) {
      std::sort(completed.begin(), completed.end());
      for (const Event& done : completed) {
        if (done.code == kFinish << 24) {
          finish(done.op);
        } else {
          handle_composite_event(done);
        }
      }
      completed.clear();
      continue;
    }
    dispatch_waiting_streams();
    if (running_.empty()) break;
    const auto next = running_.pop();  // the next instant with completions (maybe still now)
    now_ = static_cast<TimeNs>(next.key);
    // Nothing can change the past any more: what stamped templates do before now happens.
    apply_later_effects_before(now_);
    running_.push(next.key, next.value);
  }
  // The gap after a device's last kernel is busy up to the iteration's end, not past it (a
  // template's keeps it: what follows the composite continues the stretch).
  if (recording_ == nullptr) activity_cap_ = std::max(now_, composite_end_);
  apply_later_effects_before(std::numeric_limits<TimeNs>::max());
  for (std::size_t i = 0; i < graph_.op_count(); ++i) {
    if (pending_[i] != 0) {
      throw std::logic_error("simulation ended with op '" + graph_.display_name(op_id(i)) + "' waiting for " +
                             std::to_string(pending_[i]) + " dependencies");
    }
  }
  result_.makespan = std::max(now_, composite_end_);
  for (std::size_t d = 0; d < graph_.device_count(); ++d) {
    DeviceResult& device = result_.devices[d];
    if constexpr (kComposites) {
      ledgers_[d].finish(device, options_.record_memory_timeline);
    } else {
      memory_[d].finish(device);
    }
    device.memory_capacity = graph_.device(DeviceId(static_cast<DeviceId::value_type>(d))).memory_capacity;
    device.oom = device.memory_capacity > 0 && device.peak_memory > device.memory_capacity;
  }
  result_.critical_path = find_critical_path(result_);
  return std::move(result_);
}

// Tensors that exist before the iteration (no producer) and those that live for the whole run
// are allocated at time 0; in a template, the members of an input bundle were allocated by
// the composite that produced them.
template <bool kComposites>
inline void Simulation<kComposites>::allocate_initial_tensors() {
  for (std::size_t i = 0; i < graph_.tensor_count(); ++i) {
    const TensorId tensor(static_cast<TensorId::value_type>(i));
    const TensorRecord& record = graph_.tensor(tensor);
    remaining_consumers_[i] = static_cast<std::uint32_t>(graph_.tensor_consumers(tensor).size());
    if (recording_ != nullptr && recording_->subgraph->is_port(tensor)) continue;
    const bool allocated_before = recording_ != nullptr && recording_->subgraph->is_input_member(tensor);
    if ((!record.producer.valid() || lives_whole_run(record.kind)) && holds_memory(record.kind) && !allocated_before)
      memory_change(record.device, 0, record.bytes);
    if (tracks_tensor_times_ && !record.producer.valid()) tensor_ready_[i] = 0;
  }
}

// A composite's output that its template also reads inside has those readers as one more
// consumer, done when the schedule says (see start_composite).
template <bool kComposites>
inline void Simulation<kComposites>::count_readers_inside_composites() {
  for (std::size_t c = 0; c < graph_.composite_count(); ++c) {
    const CompositeId composite(static_cast<CompositeId::value_type>(c));
    const Subgraph& subgraph = graph_.subgraph(graph_.composite(composite).subgraph);
    const auto outputs = graph_.op_outputs(graph_.composite(composite).op);
    for (std::size_t p = 0; p < outputs.size(); ++p) {
      if (subgraph.output_read_inside(p)) ++remaining_consumers_[outputs[p].value()];
    }
  }
}

// The first op issued on each stream (a composite's on each of its streams), or none.
template <bool kComposites>
inline std::vector<OpId> Simulation<kComposites>::first_op_of_each_stream() const {
  std::vector<OpId> first(graph_.stream_count(), OpId::none());
  for (std::size_t i = graph_.op_count(); i-- > 0;) {
    for (StreamId stream : op_streams(graph_, op_id(i))) first[stream.value()] = op_id(i);
  }
  return first;
}

// A stream that only becomes free later (a template's, whose outer stream is still busy when
// it starts): its first op waits for an event at that time, or for a composite running it as
// a secondary stream, knows the time from stream_free_.
template <bool kComposites>
inline void Simulation<kComposites>::delay_streams_not_yet_available() {
  if (options_.stream_available.empty()) return;
  const std::vector<OpId> first = first_op_of_each_stream();
  for (std::size_t s = 0; s < graph_.stream_count() && s < options_.stream_available.size(); ++s) {
    const TimeNs available = options_.stream_available[s];
    if (available <= 0 || !first[s].valid()) continue;
    if constexpr (kComposites) stream_free_[s] = available;
    if (graph_.op_stream(first[s]).value() != s) continue;
    ++pending_[first[s].value()];
    running_.push(static_cast<std::uint64_t>(available), make_event(first[s], kStreamAvailable));
  }
}

// The host of a host-issued stream issues its ops in order, each in its class's host_issue_ns,
// from the time given for it (0 for an iteration) and never waits for the device: each op is
// issued at a time known before the run. A composite learns when the host issued what precedes it
// there, and its template's schedule follows (TemplateScheduler::schedule).
template <bool kComposites>
inline void Simulation<kComposites>::schedule_host_issue() {
  if (!duration_.any_host_issue()) return;
  const std::vector<OpId> first = first_op_of_each_stream();
  for (std::size_t s = 0; s < graph_.stream_count(); ++s) {
    TimeNs issued = options_.host_issued_until.empty() ? 0 : options_.host_issued_until[s];
    if (!duration_.host_issued(StreamId::at(s)) || issued == kHostAhead) continue;
    if (host_issued_.empty()) {
      host_issued_.assign(graph_.op_count(), kHostAhead);
      if constexpr (kComposites) composite_host_issued_.assign(graph_.composite_binding_count(), kHostAhead);
    }
    for (OpId op = first[s]; op.valid();) {
      if constexpr (kComposites) {
        if (graph_.is_composite(op)) {
          const CompositeId composite = graph_.op_composite(op);
          const auto streams = graph_.composite_streams(composite);
          const auto j =
              static_cast<std::size_t>(std::find(streams.begin(), streams.end(), StreamId::at(s)) - streams.begin());
          composite_host_issued_[graph_.composite(composite).binding_begin + j] = issued;
          issued += templates_.issued_host_ns(graph_.subgraph(graph_.composite(composite).subgraph), j);
          op = graph_.composite_next(composite)[j];
          continue;
        }
      }
      issued += duration_.host_issue(op);
      host_issued_[op.value()] = issued;
      op = graph_.op(op).next_in_stream;
    }
  }
}

// ---- completions ----------------------------------------------------------------------------

template <bool kComposites>
void Simulation<kComposites>::handle_composite_event(const Event& event) {
  switch (event.kind()) {
    case kFinish:  // run() finishes ops itself
      return;
    case kPort:
      release_readers(event.op, graph_.op_outputs(event.op)[event.index()]);
      return;
    case kSignal:  // one event per signal edge
      release(graph_.signal_successors(graph_.op_composite(event.op))[event.index()].second, event.op);
      return;
    case kRelease:
      release_next_in_stream(event.op, graph_.composite_streams(graph_.op_composite(event.op))[event.index()],
                             event.index());
      return;
    case kDone:
      for (OpId successor : graph_.composite_control_successors(graph_.op_composite(event.op))) {
        release(successor, event.op);
      }
      return;
    case kStreamAvailable:
      release(event.op, OpId::none());
      return;
    case kKernelGap:
      release(stream_successor(event.op, event.index()), event.op);
      return;
    case kHostIssued:  // the op was ready before: its host is what it waited for
      result_.op_binding[event.op.value()] = OpId::none();
      on_ready(event.op, now_);
      return;
  }
}

// One of `op`'s dependencies completed now; `by` is the op whose completion it was.
template <bool kComposites>
inline void Simulation<kComposites>::release(OpId op, OpId by) {
  if constexpr (kComposites) note_gate(op, by);
  if (--pending_[op.value()] == 0) {
    result_.op_binding[op.value()] = by;
    on_ready(op, now_);
  }
}

// The op after `by` on `stream` (the composite `by`'s stream `j`), now that `by` is done there: on
// a stream with a kernel gap (the device's time between two kernels queued back to back) it may
// start that long after.
template <bool kComposites>
inline void Simulation<kComposites>::release_next_in_stream(OpId by, StreamId stream, std::uint32_t j) {
  const TimeNs gap = duration_.kernel_gap(stream);
  if (gap == 0) {
    release(stream_successor(by, j), by);
    return;
  }
  running_.push(static_cast<std::uint64_t>(now_ + gap), make_event(by, kKernelGap, j));
}

template <bool kComposites>
inline OpId Simulation<kComposites>::stream_successor(OpId op, std::uint32_t j) const {
  const CompositeId composite = graph_.op_composite(op);
  return composite.valid() ? graph_.composite_next(composite)[j] : graph_.op(op).next_in_stream;
}

// A composite's ops can start no earlier than its last gating dependency (every one but the
// previous ops of its secondary streams, which only delay those streams); that one is its
// binding even when a secondary stream's op is what makes it ready.
template <bool kComposites>
inline void Simulation<kComposites>::note_gate(OpId op, OpId by) {
  if (const CompositeId composite = graph_.op_composite(op); composite.valid()) {
    gate_time_[composite.value()] = now_;
    result_.op_binding[op.value()] = by;
  }
}

// The ops waiting for `tensor`, which `producer` made available now.
template <bool kComposites>
inline void Simulation<kComposites>::release_readers(OpId producer, TensorId tensor) {
  const auto readers = graph_.tensor_consumers(tensor);
  for (std::size_t i = 0; i < readers.size(); ++i) {
    if (!graph_.consumer_is_weak(tensor, i)) release(readers[i], producer);
  }
}

template <bool kComposites>
inline void Simulation<kComposites>::finish(OpId op) {
  const OpRecord& record = graph_.op(op);
  StreamState& stream = streams_[record.stream.value()];
  if (const TimeNs gap = duration_.kernel_gap(record.stream); gap > 0) {
    // The device stays busy through the gap after a kernel of a host-issued stream (its front end
    // launches the next one then): kernels back to back make one busy stretch, and a template's
    // stamped activity stays one change per idle stretch.
    later_effect({now_ + gap, stream.device, -1});
  } else {
    activity_now(stream.device, -1);
  }
  const TimeNs now = now_;
  for (TensorId tensor : graph_.op_inputs(op)) account_reader(tensor, now);
  if (graph_.has_workspaces()) free_workspaces(op, now);
  for (OpId successor : graph_.data_and_control_successors(op)) release(successor, op);
  const OpId next = record.next_in_stream;
  // A composite that runs this stream as a secondary one was told when it frees at our start.
  if (next.valid() && !runs_as_secondary(next, record.stream)) release_next_in_stream(op, record.stream);
  if (!stream.in_order) {
    stream.busy = false;
    mark_for_dispatch(record.stream);
  }
}

// An op's scratch memory is gone when it ends.
template <bool kComposites>
inline void Simulation<kComposites>::free_workspaces(OpId op, TimeNs now) {
  for (TensorId tensor : graph_.op_outputs(op)) {
    const TensorRecord& output = graph_.tensor(tensor);
    if (output.kind == TensorKind::workspace && counts_memory(tensor, output))
      memory_change(output.device, now, -output.bytes);
  }
}

// ---- starting ops ---------------------------------------------------------------------------

template <bool kComposites>
inline void Simulation<kComposites>::on_ready(OpId op, TimeNs now) {
  const OpRecord& record = graph_.op(op);
  if constexpr (kComposites) {
    if (graph_.is_composite(op)) {
      start_composite(op);
      return;
    }
  }
  if (!host_issued_.empty() && host_issued_[op.value()] > now) {
    running_.push(static_cast<std::uint64_t>(host_issued_[op.value()]), make_event(op, kHostIssued));
    return;
  }
  if (record.collective.valid()) {
    const auto members = graph_.collective_members(record.collective);
    if (++collective_ready_[record.collective.value()] < members.size()) return;
    const TimeNs duration = duration_.of_collective(record.collective);
    // Every member waited for the last one to be ready, hence for what that one waited for.
    const OpId binding = result_.op_binding[op.value()];
    for (OpId member : members) {
      result_.op_binding[member.value()] = binding;
      start(member, graph_.op(member), now, duration);
    }
    return;
  }
  StreamState& stream = streams_[record.stream.value()];
  if (stream.in_order) {
    start(op, record, now, duration_(op));
    return;
  }
  stream.queue.push_back({now, op});
  std::push_heap(stream.queue.begin(), stream.queue.end());
  mark_for_dispatch(record.stream);
}

template <bool kComposites>
inline void Simulation<kComposites>::mark_for_dispatch(StreamId id) {
  StreamState& stream = streams_[id.value()];
  if (stream.marked) return;
  stream.marked = true;
  marked_streams_.push_back(id);
}

// Runs after every completion of an instant, so that all ops ready at that instant compete
// for a free first_ready stream.
template <bool kComposites>
inline void Simulation<kComposites>::dispatch_waiting_streams() {
  for (StreamId id : marked_streams_) {
    StreamState& stream = streams_[id.value()];
    stream.marked = false;
    if (stream.busy || stream.queue.empty()) continue;
    std::pop_heap(stream.queue.begin(), stream.queue.end());
    const WaitingOp next = stream.queue.back();
    stream.queue.pop_back();
    if (next.time < now_) result_.op_binding[next.op.value()] = stream.last_op;
    stream.busy = true;
    stream.last_op = next.op;
    start(next.op, graph_.op(next.op), now_, duration_(next.op));
  }
  marked_streams_.clear();
}

template <bool kComposites>
inline void Simulation<kComposites>::start(OpId op, const OpRecord& record, TimeNs now, TimeNs duration) {
  const TimeNs end = now + duration;
  result_.op_start[op.value()] = now;
  result_.op_end[op.value()] = end;
  running_.push(static_cast<std::uint64_t>(end), make_event(op, kFinish));

  const DeviceId device = streams_[record.stream.value()].device;
  activity_now(device, +1);
  const auto category = static_cast<std::size_t>(work_category_[record.work.value()]);
  result_.devices[device.value()].busy_by_category[category] += duration;
  if (tracks_tensor_times_ && graph_.has_weak_inputs()) check_weak_inputs(op, now);

  for (TensorId tensor : graph_.op_outputs(op)) {
    const TensorRecord& output = graph_.tensor(tensor);
    if (counts_memory(tensor, output)) memory_change(output.device, now, output.bytes);
    if (tracks_tensor_times_) tensor_ready_[tensor.value()] = end;
  }
  if constexpr (kComposites) {
    stream_free_[record.stream.value()] = stream_frees(end, record.stream);
    // A composite that runs this stream as a secondary one may start now: it knows when the
    // stream frees.
    const OpId next = record.next_in_stream;
    if (next.valid() && runs_as_secondary(next, record.stream) && --pending_[next.value()] == 0) {
      start_composite(next);
    }
  }
}

template <bool kComposites>
inline void Simulation<kComposites>::check_weak_inputs(OpId op, TimeNs now) const {
  const auto inputs = graph_.op_inputs(op);
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    const TimeNs ready = tensor_ready_[inputs[i].value()];
    if (graph_.input_is_weak(op, i) && (ready == kUnknown || ready > now)) {
      throw std::logic_error("op '" + graph_.display_name(op) + "' reads '" +
                             std::string(graph_.tensor_name(inputs[i])) + "' before it is produced");
    }
  }
}

// ---- effects known before their instant -------------------------------------------------

template <bool kComposites>
inline void Simulation<kComposites>::apply_later_effects_before(TimeNs time) {
  const TimeNs now = now_;
  while (!later_.empty() && later_.front().time < time) {
    std::pop_heap(later_.begin(), later_.end());
    const LaterEffect effect = later_.back();
    later_.pop_back();
    now_ = std::min(effect.time, activity_cap_);  // applied as of its own instant
    activity_now(effect.device, effect.activity);
  }
  now_ = now;
}

}  // namespace simulation_detail

SimulationResult run_simulation(const Graph& graph, const CostModel& cost_model, const SimulationOptions& options,
                                TemplateScheduler& templates, TemplateRecording* recording) {
  using simulation_detail::Simulation;
  if (graph.composite_count() > 0) return Simulation<true>(graph, cost_model, options, templates, recording).run();
  return Simulation<false>(graph, cost_model, options, templates, recording).run();
}

}  // namespace weft
