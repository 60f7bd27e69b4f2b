#include "simulator/engine/simulation.hpp"

#include <algorithm>
#include <limits>
#include <stdexcept>

#include "simulator/engine/critical_path.hpp"
#include "simulator/engine/device_memory_ledger.hpp"
#include "simulator/engine/device_memory_tracker.hpp"
#include "simulator/engine/op_durations.hpp"
#include "simulator/engine/radix_heap.hpp"
#include "simulator/engine/template_scheduler.hpp"

namespace weft {
namespace {

// What an event completes. Primitive ops finish; a composite's output ports, signals, stream
// releases and end come at the times its template's schedule gives; a stream that is busy
// before the run (a template's) becomes available.
enum EventKind : std::uint32_t { kFinish, kPort, kSignal, kRelease, kDone, kStreamAvailable };

struct Event {
  OpId op;                 // for kStreamAvailable: the first op of the stream
  std::uint32_t code = 0;  // kind << 24 | index

  EventKind kind() const { return static_cast<EventKind>(code >> 24); }
  std::uint32_t index() const { return code & 0xFFFFFF; }
  friend bool operator<(const Event& a, const Event& b) { return a.op != b.op ? a.op < b.op : a.code < b.code; }
};

Event make_event(OpId op, EventKind kind, std::uint32_t index = 0) { return {op, (kind << 24) | index}; }

// A change of a device's activity known before the instant it happens at (a stamped
// template's).
struct LaterEffect {
  TimeNs time;
  DeviceId device;
  std::int32_t activity = 0;
  // Min-heap order for std::push_heap. Effects of one instant commute, so time alone decides.
  friend bool operator<(const LaterEffect& a, const LaterEffect& b) { return a.time > b.time; }
};

// An op that became ready at `time`, waiting for a first_ready stream.
struct WaitingOp {
  TimeNs time;
  OpId op;
  // Min-heap order for std::push_heap: earliest time first, then lowest op id.
  friend bool operator<(const WaitingOp& a, const WaitingOp& b) {
    return a.time != b.time ? a.time > b.time : a.op > b.op;
  }
};

struct StreamState {
  DeviceId device;
  bool in_order = true;
  // first_ready streams only:
  bool busy = false;
  bool marked = false;          // on the list of streams to dispatch at the current instant
  OpId last_op = OpId::none();  // the most recent op to run on the stream
  std::vector<WaitingOp> queue;
};

struct DeviceActivity {
  std::uint32_t running = 0;
  TimeNs busy_since = 0;
};

constexpr TimeNs kUnknown = -1;

// kComposites: whether the graph has composite ops. The common case without them compiles to a
// loop that carries none of their bookkeeping.
template <bool kComposites>
class Simulation {
 public:
  Simulation(const Graph& graph, const CostModel& cost_model, const SimulationOptions& options,
             TemplateScheduler& templates, TemplateRecording* recording)
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

  SimulationResult run() {
    allocate_initial_tensors();
    count_readers_inside_composites();
    for (std::size_t i = 0; i < graph_.op_count(); ++i) pending_[i] = graph_.dependency_count(op_id(i));
    delay_streams_not_yet_available();
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

 private:
  static OpId op_id(std::size_t i) { return OpId(static_cast<OpId::value_type>(i)); }

  // Whether `tensor`'s bytes count on its device here: a template's ports belong to whoever
  // instantiates it; a bundle's members hold its memory.
  [[gnu::always_inline]] bool counts_memory(TensorId tensor, const TensorRecord& record) const {
    return !lives_whole_run(record.kind) && holds_memory(record.kind) &&
           (recording_ == nullptr || !recording_->subgraph->is_port(tensor));
  }

  // Tensors that exist before the iteration (no producer) and those that live for the whole run
  // are allocated at time 0; in a template, the members of an input bundle were allocated by
  // the composite that produced them.
  void allocate_initial_tensors() {
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
  void count_readers_inside_composites() {
    for (std::size_t c = 0; c < graph_.composite_count(); ++c) {
      const CompositeId composite(static_cast<CompositeId::value_type>(c));
      const Subgraph& subgraph = graph_.subgraph(graph_.composite(composite).subgraph);
      const auto outputs = graph_.op_outputs(graph_.composite(composite).op);
      for (std::size_t p = 0; p < outputs.size(); ++p) {
        if (subgraph.output_read_inside(p)) ++remaining_consumers_[outputs[p].value()];
      }
    }
  }

  // A stream that only becomes free later (a template's, whose outer stream is still busy when
  // it starts): its first op waits for an event at that time, or for a composite running it as
  // a secondary stream, knows the time from stream_free_.
  void delay_streams_not_yet_available() {
    if (options_.stream_available.empty()) return;
    std::vector<OpId> first(graph_.stream_count(), OpId::none());
    for (std::size_t i = graph_.op_count(); i-- > 0;) {
      for (StreamId stream : op_streams(graph_, op_id(i))) first[stream.value()] = op_id(i);
    }
    for (std::size_t s = 0; s < graph_.stream_count() && s < options_.stream_available.size(); ++s) {
      const TimeNs available = options_.stream_available[s];
      if (available <= 0 || !first[s].valid()) continue;
      if constexpr (kComposites) stream_free_[s] = available;
      if (graph_.op_stream(first[s]).value() != s) continue;
      ++pending_[first[s].value()];
      running_.push(static_cast<std::uint64_t>(available), make_event(first[s], kStreamAvailable));
    }
  }

  // ---- completions --------------------------------------------------------------------------

  [[gnu::noinline]] void handle_composite_event(const Event& event) {
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
        release(graph_.composite_next(graph_.op_composite(event.op))[event.index()], event.op);
        return;
      case kDone:
        for (OpId successor : graph_.composite_control_successors(graph_.op_composite(event.op))) {
          release(successor, event.op);
        }
        return;
      case kStreamAvailable:
        release(event.op, OpId::none());
        return;
    }
  }

  // One of `op`'s dependencies completed now; `by` is the op whose completion it was.
  [[gnu::always_inline]] void release(OpId op, OpId by) {
    if constexpr (kComposites) note_gate(op, by);
    if (--pending_[op.value()] == 0) {
      result_.op_binding[op.value()] = by;
      on_ready(op, now_);
    }
  }

  // A composite's ops can start no earlier than its last gating dependency (every one but the
  // previous ops of its secondary streams, which only delay those streams); that one is its
  // binding even when a secondary stream's op is what makes it ready.
  void note_gate(OpId op, OpId by) {
    if (const CompositeId composite = graph_.op_composite(op); composite.valid()) {
      gate_time_[composite.value()] = now_;
      result_.op_binding[op.value()] = by;
    }
  }

  // The ops waiting for `tensor`, which `producer` made available now.
  void release_readers(OpId producer, TensorId tensor) {
    const auto readers = graph_.tensor_consumers(tensor);
    for (std::size_t i = 0; i < readers.size(); ++i) {
      if (!graph_.consumer_is_weak(tensor, i)) release(readers[i], producer);
    }
  }

  void finish(OpId op) {
    const OpRecord& record = graph_.op(op);
    StreamState& stream = streams_[record.stream.value()];
    activity_now(stream.device, -1);
    const TimeNs now = now_;
    for (TensorId tensor : graph_.op_inputs(op)) account_reader(tensor, now);
    for (OpId successor : graph_.data_and_control_successors(op)) release(successor, op);
    const OpId next = record.next_in_stream;
    // A composite that runs this stream as a secondary one was told when it frees at our start.
    if (next.valid() && !runs_as_secondary(next, record.stream)) release(next, op);
    if (!stream.in_order) {
      stream.busy = false;
      mark_for_dispatch(record.stream);
    }
  }

  [[gnu::always_inline]] bool runs_as_secondary(OpId op, StreamId stream) const {
    return kComposites && graph_.is_composite(op) && graph_.op_stream(op) != stream;
  }

  // A reader of `tensor` is done with it at `done` (now or later); the tensor dies when its last
  // reader is.
  [[gnu::always_inline]] void account_reader(TensorId tensor, TimeNs done) {
    const TimeNs free_at = release_time(tensor, done);
    if (free_at != kUnknown) memory_change(graph_.tensor(tensor).device, free_at, -graph_.tensor(tensor).bytes);
  }

  // When the reader done at `done` frees `tensor`'s bytes, or kUnknown if it does not: readers
  // remain, or the tensor's bytes do not count.
  [[gnu::always_inline]] TimeNs release_time(TensorId tensor, TimeNs done) {
    TimeNs free_at = done;
    if constexpr (kComposites) free_at = free_time_[tensor.value()] = std::max(free_time_[tensor.value()], done);
    if (--remaining_consumers_[tensor.value()] > 0) return kUnknown;
    // A template's output bundle members belong to whoever takes the bundle.
    if (recording_ != nullptr && recording_->subgraph->is_output_member(tensor)) return kUnknown;
    return counts_memory(tensor, graph_.tensor(tensor)) ? free_at : kUnknown;
  }

  // With composites, changes come out of time order (a stamped template's ports change memory
  // ahead of the simulation): the ledger sorts them out at the end. Without, they come now.
  [[gnu::always_inline]] void memory_change(DeviceId device, TimeNs at, Bytes delta) {
    if constexpr (kComposites) {
      ledgers_[device.value()].change(at, delta);
    } else {
      memory_[device.value()].change(at, delta);
    }
  }

  void activity_change(DeviceId device, TimeNs at, int delta) {
    if (at != now_) {
      later_effect({at, device, delta});
      return;
    }
    activity_now(device, delta);
  }

  // A stream of `device` starts (+1) or ends (-1) an op now.
  [[gnu::always_inline]] void activity_now(DeviceId device, int delta) {
    const TimeNs at = now_;
    DeviceActivity& activity = activity_[device.value()];
    if (delta > 0) {
      if (activity.running++ > 0) return;
      activity.busy_since = at;
    } else {
      if (--activity.running > 0) return;
      result_.devices[device.value()].busy_ns += at - activity.busy_since;
    }
    if (recording_ != nullptr) recording_->activity[device.value()].emplace_back(at, delta);
  }

  // ---- starting ops ---------------------------------------------------------------------------

  [[gnu::always_inline]] void on_ready(OpId op, TimeNs now) {
    const OpRecord& record = graph_.op(op);
    if (kComposites && graph_.is_composite(op)) {
      start_composite(op);
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

  void mark_for_dispatch(StreamId id) {
    StreamState& stream = streams_[id.value()];
    if (stream.marked) return;
    stream.marked = true;
    marked_streams_.push_back(id);
  }

  // Runs after every completion of an instant, so that all ops ready at that instant compete
  // for a free first_ready stream.
  void dispatch_waiting_streams() {
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

  [[gnu::always_inline]] void start(OpId op, const OpRecord& record, TimeNs now, TimeNs duration) {
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
      stream_free_[record.stream.value()] = end;
      // A composite that runs this stream as a secondary one may start now: it knows when the
      // stream frees.
      const OpId next = record.next_in_stream;
      if (next.valid() && runs_as_secondary(next, record.stream) && --pending_[next.value()] == 0) {
        start_composite(next);
      }
    }
  }

  void check_weak_inputs(OpId op, TimeNs now) const {
    const auto inputs = graph_.op_inputs(op);
    for (std::size_t i = 0; i < inputs.size(); ++i) {
      const TimeNs ready = tensor_ready_[inputs[i].value()];
      if (graph_.input_is_weak(op, i) && (ready == kUnknown || ready > now)) {
        throw std::logic_error("op '" + graph_.display_name(op) + "' reads '" +
                               std::string(graph_.tensor_name(inputs[i])) + "' before it is produced");
      }
    }
  }

  // ---- composites ------------------------------------------------------------------------------

  // Stamps the template's schedule for a composite whose dependencies are all met. Its ops
  // could start at `origin`, when the last dependency that gates them completed; streams bound
  // as secondary ones may free later, which shifts the schedule (part of its cache key).
  [[gnu::noinline]] void start_composite(OpId op) {
    const CompositeId composite = graph_.op_composite(op);
    const Subgraph& subgraph = graph_.subgraph(graph_.composite(composite).subgraph);
    const auto streams = graph_.composite_streams(composite);
    const TimeNs origin = gate_time_[composite.value()];
    offsets_.assign(streams.size(), 0);
    for (std::size_t j = 1; j < streams.size(); ++j) {
      offsets_[j] = std::max<TimeNs>(0, stream_free_[streams[j].value()] - origin);
    }
    std::shared_ptr<const TemplateSchedule> schedule = templates_.schedule(subgraph, offsets_);
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
      stream_free_[streams[j].value()] = release_at;
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

  void push_event(TimeNs at, OpId op, EventKind kind, std::size_t index) {
    running_.push(static_cast<std::uint64_t>(at), make_event(op, kind, static_cast<std::uint32_t>(index)));
  }

  // Stamping is exact when the template's ops run at the times they would run if simulated one
  // by one, and nothing is stamped into the past. An op inside waits for the ports it reads and
  // for the op before it on its stream; the first ops inside also for the control and signal
  // edges into the composite. So the first op on each stream, unless something inside gates it,
  // could have started before `origin` (the latest of the composite's gates) if its stream, its
  // ports and those edges were done earlier.
  void check_exact(OpId op, const Subgraph& subgraph, const TemplateSchedule& times, TimeNs origin) const {
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

  // The composite that produced a bundle (stamped already), where and as what.
  struct BundleSource {
    TimeNs origin;
    const TemplateSchedule* times;
    std::size_t port;
    const Subgraph* subgraph;
  };
  BundleSource source_of(TensorId bundle) const {
    const OpId producer = graph_.tensor_producer(bundle);
    const CompositeId composite = graph_.op_composite(producer);
    const TemplateSchedule* times = result_.composite_schedules[composite.value()].get();
    const auto outputs = graph_.op_outputs(producer);
    const auto port = static_cast<std::size_t>(std::find(outputs.begin(), outputs.end(), bundle) - outputs.begin());
    return {result_.op_start[producer.value()] - times->earliest_start, times, port,
            &graph_.subgraph(graph_.composite(composite).subgraph)};
  }

  // When member `member` of bundle `bundle` is (or will be) produced.
  TimeNs member_ready(TensorId bundle, std::uint32_t member) const {
    const BundleSource source = source_of(bundle);
    return source.origin + source.times->member_ready[source.port][member];
  }

  // A bundle's members die when the reader's template last reads them (its profile frees them
  // then), unless the producer's template reads one later, or the reader (none: `released` is
  // null) never does: then it dies when the producer is done with it.
  void settle_members(TensorId bundle, TimeNs reader_origin, const std::vector<TimeNs>* released) {
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
  TimeNs done_time(OpId op, std::int32_t signal) const {
    if (signal < 0) return result_.op_end[op.value()];
    const TemplateSchedule& times = *result_.composite_schedules[graph_.op_composite(op).value()];
    return result_.op_start[op.value()] - times.earliest_start + times.signal_time[static_cast<std::size_t>(signal)];
  }

  void stamp_device_effects(std::span<const StreamId> streams, const Subgraph& subgraph, const TemplateSchedule& times,
                            TimeNs origin) {
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

  // ---- effects known before their instant -------------------------------------------------

  [[gnu::noinline]] void later_effect(const LaterEffect& effect) {
    later_.push_back(effect);
    std::push_heap(later_.begin(), later_.end());
  }

  void apply_later_effects_before(TimeNs time) {
    const TimeNs now = now_;
    while (!later_.empty() && later_.front().time < time) {
      std::pop_heap(later_.begin(), later_.end());
      const LaterEffect effect = later_.back();
      later_.pop_back();
      now_ = effect.time;  // applied as of its own instant
      activity_change(effect.device, effect.time, effect.activity);
    }
    now_ = now;
  }

  const Graph& graph_;
  const SimulationOptions& options_;
  TemplateScheduler& templates_;
  TemplateRecording* recording_;
  OpDurations duration_;
  std::vector<std::uint32_t> pending_;
  std::vector<std::uint32_t> remaining_consumers_;
  std::vector<std::uint32_t> collective_ready_;
  std::vector<StreamState> streams_;
  std::vector<StreamId> marked_streams_;
  std::vector<DeviceActivity> activity_;
  std::vector<DeviceMemoryTracker> memory_;  // without composites
  std::vector<DeviceMemoryLedger> ledgers_;  // with composites
  std::vector<OpCategory> work_category_;    // by work id
  RadixHeap<Event> running_;                 // completions by time
  TimeNs now_ = 0;
  const bool tracks_tensor_times_;
  std::vector<TimeNs> tensor_ready_;  // by tensor: when it is (or will be) produced; kUnknown before
  // Composites only:
  std::vector<TimeNs> gate_time_;    // by composite: when its last gating dependency completed
  std::vector<TimeNs> free_time_;    // by tensor: latest end of its readers so far
  std::vector<TimeNs> stream_free_;  // by stream: when the ops started on it so far end
  std::vector<TimeNs> offsets_;      // scratch: a composite's stream offsets
  std::vector<LaterEffect> later_;   // min-heap by time
  TimeNs composite_end_ = 0;
  SimulationResult result_;
};

}  // namespace

SimulationResult run_simulation(const Graph& graph, const CostModel& cost_model, const SimulationOptions& options,
                                TemplateScheduler& templates, TemplateRecording* recording) {
  if (graph.composite_count() > 0) return Simulation<true>(graph, cost_model, options, templates, recording).run();
  return Simulation<false>(graph, cost_model, options, templates, recording).run();
}

}  // namespace weft
