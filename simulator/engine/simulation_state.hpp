// The state of one discrete-event run (Simulation) and what its two halves share: the event loop
// over primitive ops (simulation.cpp) and the stamping of composites from their templates'
// schedules (composite_stamping.cpp). Internal to the engine.
#pragma once

#include <algorithm>
#include <cstdint>
#include <limits>
#include <span>
#include <vector>

#include "simulator/engine/device_memory_ledger.hpp"
#include "simulator/engine/device_memory_tracker.hpp"
#include "simulator/engine/op_durations.hpp"
#include "simulator/engine/radix_heap.hpp"
#include "simulator/engine/simulation.hpp"

namespace weft::simulation_detail {

// What an event completes. Primitive ops finish; a composite's output ports, signals, stream
// releases and end come at the times its template's schedule gives; a stream that is busy
// before the run (a template's) becomes available; the host issues an op that was ready before.
enum EventKind : std::uint32_t {
  kFinish,
  kPort,
  kSignal,
  kRelease,
  kDone,
  kStreamAvailable,
  kHostIssued,
  kKernelGap,  // `op` ended a kernel gap ago on its stream (a composite's stream `index`)
};

struct Event {
  OpId op;                 // for kStreamAvailable: the first op of the stream
  std::uint32_t code = 0;  // kind << 24 | index

  EventKind kind() const { return static_cast<EventKind>(code >> 24); }
  std::uint32_t index() const { return code & 0xFFFFFF; }
  friend bool operator<(const Event& a, const Event& b) { return a.op != b.op ? a.op < b.op : a.code < b.code; }
};

inline Event make_event(OpId op, EventKind kind, std::uint32_t index = 0) { return {op, (kind << 24) | index}; }

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
//
// The members defined in simulation.cpp and composite_stamping.cpp are declared `inline` there,
// as they were when defined inside the class; but not those marked noinline (start_composite
// among them: the event loop calls it from the other file). As the class is not local to one
// file, the compiler expects its members to be shared with other files and inlines fewer of them
// on its own: those that belong inside the event loop are marked always_inline.
template <bool kComposites>
class Simulation {
 public:
  Simulation(const Graph& graph, const CostModel& cost_model, const SimulationOptions& options,
             TemplateScheduler& templates, TemplateRecording* recording);

  SimulationResult run();

 private:
  // ---- the event loop over primitive ops (simulation.cpp) ------------------------------------

  static OpId op_id(std::size_t i) { return OpId(static_cast<OpId::value_type>(i)); }

  void allocate_initial_tensors();
  void count_readers_inside_composites();
  std::vector<OpId> first_op_of_each_stream() const;
  void delay_streams_not_yet_available();
  void schedule_host_issue();

  [[gnu::noinline]] void handle_composite_event(const Event& event);
  [[gnu::always_inline]] void release(OpId op, OpId by);
  [[gnu::always_inline]] void release_next_in_stream(OpId by, StreamId stream, std::uint32_t j = 0);
  OpId stream_successor(OpId op, std::uint32_t j) const;
  [[gnu::always_inline]] TimeNs stream_frees(TimeNs end, StreamId stream) const {
    return end + duration_.kernel_gap(stream);
  }
  [[gnu::always_inline]] void note_gate(OpId op, OpId by);
  void release_readers(OpId producer, TensorId tensor);
  void finish(OpId op);
  void free_workspaces(OpId op, TimeNs now);

  [[gnu::always_inline]] void on_ready(OpId op, TimeNs now);
  void mark_for_dispatch(StreamId id);
  [[gnu::always_inline]] void dispatch_waiting_streams();
  [[gnu::always_inline]] void start(OpId op, const OpRecord& record, TimeNs now, TimeNs duration);
  void check_weak_inputs(OpId op, TimeNs now) const;

  void apply_later_effects_before(TimeNs time);

  // ---- composites (composite_stamping.cpp; kComposites only) ---------------------------------

  [[gnu::noinline]] void start_composite(OpId op);
  void push_event(TimeNs at, OpId op, EventKind kind, std::size_t index);
  void check_exact(OpId op, const Subgraph& subgraph, const TemplateSchedule& times, TimeNs origin) const;

  // The composite that produced a bundle (stamped already), where and as what.
  struct BundleSource {
    TimeNs origin;
    const TemplateSchedule* times;
    std::size_t port;
    const Subgraph* subgraph;
  };
  BundleSource source_of(TensorId bundle) const;
  TimeNs member_ready(TensorId bundle, std::uint32_t member) const;
  void settle_members(TensorId bundle, TimeNs reader_origin, const std::vector<TimeNs>* released);
  TimeNs done_time(OpId op, std::int32_t signal) const;
  void stamp_device_effects(std::span<const StreamId> streams, const Subgraph& subgraph, const TemplateSchedule& times,
                            TimeNs origin);

  // ---- memory and device activity, for both ----------------------------------------------------

  // Whether `tensor`'s bytes count on its device here: a template's ports belong to whoever
  // instantiates it; a bundle's members hold its memory.
  [[gnu::always_inline]] bool counts_memory(TensorId tensor, const TensorRecord& record) const {
    return !lives_whole_run(record.kind) && holds_memory(record.kind) &&
           (recording_ == nullptr || !recording_->subgraph->is_port(tensor));
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

  // A change of activity at a later instant (a stamped template's), applied when the simulation
  // reaches it (apply_later_effects_before).
  [[gnu::noinline]] void later_effect(const LaterEffect& effect) {
    later_.push_back(effect);
    std::push_heap(later_.begin(), later_.end());
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
  std::vector<TimeNs> gate_time_;     // by composite: when its last gating dependency completed
  std::vector<TimeNs> free_time_;     // by tensor: latest end of its readers so far
  std::vector<TimeNs> stream_free_;   // by stream: when the ops started on it so far end
  std::vector<TimeNs> offsets_;       // scratch: a composite's stream offsets
  std::vector<TimeNs> host_offsets_;  // scratch: when its hosts issued what precedes it
  // Where a host issues streams (schedule_host_issue): by op, when the host has issued it; by
  // composite stream binding, when the host has issued what precedes the composite there.
  // Empty when no host holds any op back; kHostAhead for ops and bindings no host issues.
  std::vector<TimeNs> host_issued_;
  std::vector<TimeNs> composite_host_issued_;
  std::vector<LaterEffect> later_;  // min-heap by time
  TimeNs composite_end_ = 0;
  TimeNs activity_cap_ = std::numeric_limits<TimeNs>::max();  // no later activity change past it
  SimulationResult result_;
};

}  // namespace weft::simulation_detail
