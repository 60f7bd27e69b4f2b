#include "simulator/engine/engine.hpp"

#include <algorithm>

#include "simulator/engine/critical_path.hpp"
#include "simulator/engine/device_memory_tracker.hpp"
#include "simulator/engine/op_durations.hpp"
#include "simulator/engine/radix_heap.hpp"

namespace weft {
namespace {

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

class Simulation {
 public:
  Simulation(const Graph& graph, const CostModel& cost_model, const SimulationOptions& options)
      : graph_(graph),
        duration_(graph, cost_model),
        pending_(graph.op_count()),
        remaining_consumers_(graph.tensor_count()),
        collective_ready_(graph.collective_count(), 0),
        streams_(graph.stream_count()),
        activity_(graph.device_count()),
        memory_(graph.device_count(), DeviceMemoryTracker(options.record_memory_timeline)) {
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
  }

  SimulationResult run() {
    allocate_initial_tensors();
    for (std::size_t i = 0; i < graph_.op_count(); ++i) {
      const OpId op(static_cast<OpId::value_type>(i));
      pending_[i] = graph_.dependency_count(op);
      if (pending_[i] == 0) on_ready(op, 0, OpId::none());
    }
    // Each instant: the completions at that time, in op id order, then the first_ready streams
    // choose among all the ops that became ready. Zero-duration ops started by either complete at
    // the same instant, in a further pass. Handling completions in id order makes each op's
    // binding (its last dependency to complete) independent of the event queue's internals.
    TimeNs now = 0;
    std::vector<OpId> completed;
    while (true) {
      OpId op;
      while (running_.pop_if_key(static_cast<std::uint64_t>(now), op)) completed.push_back(op);
      if (!completed.empty()) {
        std::sort(completed.begin(), completed.end());
        for (OpId done : completed) finish(done, now);
        completed.clear();
        continue;
      }
      dispatch_waiting_streams(now);
      if (running_.empty()) break;
      const auto next = running_.pop();  // the next instant with completions (maybe still `now`)
      now = static_cast<TimeNs>(next.key);
      running_.push(next.key, next.value);
    }
    result_.makespan = now;
    for (std::size_t d = 0; d < graph_.device_count(); ++d) {
      DeviceResult& device = result_.devices[d];
      memory_[d].finish(device);
      device.memory_capacity = graph_.device(DeviceId(static_cast<DeviceId::value_type>(d))).memory_capacity;
      device.oom = device.memory_capacity > 0 && device.peak_memory > device.memory_capacity;
    }
    result_.critical_path = find_critical_path(result_);
    return std::move(result_);
  }

 private:
  // Tensors that exist before the iteration (no producer) and those that live for the whole run
  // are allocated at time 0.
  void allocate_initial_tensors() {
    for (std::size_t i = 0; i < graph_.tensor_count(); ++i) {
      const TensorId tensor(static_cast<TensorId::value_type>(i));
      const TensorRecord& record = graph_.tensor(tensor);
      remaining_consumers_[i] = static_cast<std::uint32_t>(graph_.tensor_consumers(tensor).size());
      if (!record.producer.valid() || lives_whole_run(record.kind)) {
        memory_[record.device.value()].change(0, record.bytes);
      }
    }
  }

  [[gnu::always_inline]] void on_ready(OpId op, TimeNs now, OpId binding) {
    result_.op_binding[op.value()] = binding;
    const OpRecord& record = graph_.op(op);
    if (record.collective.valid()) {
      const auto members = graph_.collective_members(record.collective);
      if (++collective_ready_[record.collective.value()] < members.size()) return;
      // Every member waited for the last one to be ready, hence for what that one waited for.
      const TimeNs duration = duration_.of_collective(record.collective);
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
  void dispatch_waiting_streams(TimeNs now) {
    for (StreamId id : marked_streams_) {
      StreamState& stream = streams_[id.value()];
      stream.marked = false;
      if (stream.busy || stream.queue.empty()) continue;
      std::pop_heap(stream.queue.begin(), stream.queue.end());
      const WaitingOp next = stream.queue.back();
      stream.queue.pop_back();
      if (next.time < now) result_.op_binding[next.op.value()] = stream.last_op;
      stream.busy = true;
      stream.last_op = next.op;
      start(next.op, graph_.op(next.op), now, duration_(next.op));
    }
    marked_streams_.clear();
  }

  [[gnu::always_inline]] void start(OpId op, const OpRecord& record, TimeNs now, TimeNs duration) {
    result_.op_start[op.value()] = now;
    result_.op_end[op.value()] = now + duration;
    running_.push(static_cast<std::uint64_t>(now + duration), op);

    const DeviceId device = streams_[record.stream.value()].device;
    DeviceActivity& activity = activity_[device.value()];
    if (activity.running++ == 0) activity.busy_since = now;
    const auto category = static_cast<std::size_t>(work_category_[record.work.value()]);
    result_.devices[device.value()].busy_by_category[category] += duration;

    for (TensorId tensor : graph_.op_outputs(op)) {
      const TensorRecord& output = graph_.tensor(tensor);
      if (!lives_whole_run(output.kind)) memory_[output.device.value()].change(now, output.bytes);
    }
  }

  void finish(OpId op, TimeNs now) {
    const OpRecord& record = graph_.op(op);
    StreamState& stream = streams_[record.stream.value()];
    DeviceActivity& activity = activity_[stream.device.value()];
    if (--activity.running == 0) result_.devices[stream.device.value()].busy_ns += now - activity.busy_since;

    for (TensorId tensor : graph_.op_inputs(op)) {
      if (--remaining_consumers_[tensor.value()] > 0) continue;
      const TensorRecord& input = graph_.tensor(tensor);
      if (!lives_whole_run(input.kind)) memory_[input.device.value()].change(now, -input.bytes);
    }
    for (OpId successor : graph_.data_and_control_successors(op)) {
      if (--pending_[successor.value()] == 0) on_ready(successor, now, op);
    }
    if (record.next_in_stream.valid() && --pending_[record.next_in_stream.value()] == 0) {
      on_ready(record.next_in_stream, now, op);
    }
    if (!stream.in_order) {
      stream.busy = false;
      mark_for_dispatch(record.stream);
    }
  }

  const Graph& graph_;
  OpDurations duration_;
  std::vector<std::uint32_t> pending_;
  std::vector<std::uint32_t> remaining_consumers_;
  std::vector<std::uint32_t> collective_ready_;
  std::vector<StreamState> streams_;
  std::vector<StreamId> marked_streams_;
  std::vector<DeviceActivity> activity_;
  std::vector<DeviceMemoryTracker> memory_;
  std::vector<OpCategory> work_category_;  // by work id
  RadixHeap<OpId> running_;                // running ops by end time
  SimulationResult result_;
};

}  // namespace

SimulationResult simulate(const Graph& graph, const CostModel& cost_model, const SimulationOptions& options) {
  return Simulation(graph, cost_model, options).run();
}

}  // namespace weft
