#include "simulator/engine/template_scheduler.hpp"

#include <algorithm>
#include <chrono>
#include <limits>

#include "simulator/core/hash_mix.hpp"
#include "simulator/engine/op_durations.hpp"
#include "simulator/engine/simulation.hpp"

namespace weft {
namespace {

using Clock = std::chrono::steady_clock;

std::int64_t nanoseconds_since(Clock::time_point start) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - start).count();
}

// What reading the clock adds to an interval timed around a lookup (about 20 ns on the development
// machine, most of a quick lookup's own time): measured once.
std::int64_t clock_read_ns() {
  static const std::int64_t measured = [] {
    constexpr int kReads = 1000;
    const Clock::time_point start = Clock::now();
    for (int i = 1; i < kReads; ++i) static_cast<void>(Clock::now());
    return nanoseconds_since(start) / kReads;
  }();
  return measured;
}

// Templates this thread is simulating now (a template's simulation looks up and simulates the
// templates nested in it): their time counts once, in the outermost.
thread_local int templates_being_simulated = 0;

struct SimulatingTemplate {
  SimulatingTemplate() { ++templates_being_simulated; }
  ~SimulatingTemplate() { --templates_being_simulated; }
  SimulatingTemplate(const SimulatingTemplate&) = delete;
  SimulatingTemplate& operator=(const SimulatingTemplate&) = delete;
};

// Drops each end of a busy interval that another starts at the same instant: stamping then pushes
// one change per gap instead of two per op, and the busy time it adds up is the same.
std::vector<std::pair<TimeNs, int>> join_touching_intervals(const std::vector<std::pair<TimeNs, int>>& changes) {
  std::vector<std::pair<TimeNs, int>> joined;
  joined.reserve(changes.size());
  for (const auto& change : changes) {
    if (change.second > 0 && !joined.empty() && joined.back().first == change.first && joined.back().second < 0) {
      joined.pop_back();
    } else {
      joined.push_back(change);
    }
  }
  return joined;
}

// The changes of `device`'s memory that a composite of the template stamps: those of the
// tensors that live and die inside, and, as if the composite allocated them and read them last,
// those of its ports (the engine corrects the instances for which that is not so).
std::vector<std::pair<TimeNs, Bytes>> memory_changes(const Subgraph& subgraph, const TemplateSchedule& schedule,
                                                     const std::vector<MemoryPoint>& timeline, DeviceId device) {
  std::vector<std::pair<TimeNs, Bytes>> changes;
  Bytes level = 0;
  for (const MemoryPoint& point : timeline) {
    if (point.bytes != level) changes.emplace_back(point.time, point.bytes - level);
    level = point.bytes;
  }
  const Graph& graph = subgraph.graph();
  auto add_port = [&](TensorId tensor, TimeNs time, Bytes sign) {
    if (graph.tensor_device(tensor) == device && subgraph.port_counts_memory(tensor))
      changes.emplace_back(time, sign * graph.tensor_bytes(tensor));
  };
  for (std::size_t p = 0; p < subgraph.inputs().size(); ++p)
    add_port(subgraph.inputs()[p], schedule.input_release[p], -1);
  for (std::size_t p = 0; p < subgraph.outputs().size(); ++p)
    add_port(subgraph.outputs()[p], schedule.output_alloc[p], 1);
  return changes;
}

// The schedule of a template from its simulation: op times, boundary times and what it does to
// each device (memory of the tensors that live inside, busy intervals, busy time by category).
TemplateSchedule make_template_schedule(const Subgraph& subgraph, SimulationResult& result,
                                        TemplateRecording& recording) {
  TemplateSchedule schedule;
  schedule.op_start = std::move(result.op_start);
  schedule.op_end = std::move(result.op_end);
  schedule.nested.assign(schedule.op_start.size(), nullptr);
  const Graph& graph = subgraph.graph();
  for (std::size_t i = 0; i < graph.op_count(); ++i) {
    const CompositeId composite = graph.op_composite(OpId(static_cast<OpId::value_type>(i)));
    if (composite.valid()) schedule.nested[i] = result.composite_schedules[composite.value()];
  }
  derive_boundary_times(subgraph, schedule);
  schedule.devices.resize(graph.device_count());
  for (std::size_t d = 0; d < graph.device_count(); ++d) {
    TemplateSchedule::DeviceEffects& effects = schedule.devices[d];
    effects.memory = MemoryProfile(memory_changes(subgraph, schedule, result.devices[d].memory_timeline,
                                                  DeviceId(static_cast<DeviceId::value_type>(d))));
    effects.activity = join_touching_intervals(recording.activity[d]);
    effects.busy_by_category = result.devices[d].busy_by_category;
  }
  return schedule;
}

}  // namespace

std::uint64_t TemplateScheduler::durations_hash(const Subgraph& subgraph) {
  if (auto it = durations_.find(&subgraph); it != durations_.end()) return it->second;
  const Graph& graph = subgraph.graph();
  const OpDurations duration(graph, cost_model_);
  std::uint64_t hash = 0;
  for (std::size_t i = 0; i < graph.op_count(); ++i) {
    const OpId op(static_cast<OpId::value_type>(i));
    const OpRecord& record = graph.op(op);
    std::uint64_t value = 0;
    if (const CompositeId composite = graph.op_composite(op); composite.valid()) {
      value = durations_hash(graph.subgraph(graph.composite(composite).subgraph));
    } else if (record.collective.valid()) {
      value = static_cast<std::uint64_t>(duration.of_collective(record.collective));
    } else {
      value = hash_mix(static_cast<std::uint64_t>(duration(op)), static_cast<std::uint64_t>(duration.host_issue(op)));
    }
    hash = hash_mix(hash, value);
  }
  for (std::size_t s = 0; s < graph.stream_count(); ++s) {
    hash = hash_mix(hash, static_cast<std::uint64_t>(duration.kernel_gap(StreamId::at(s))));
  }
  durations_.emplace(&subgraph, hash);
  return hash;
}

namespace {

// Whether a host that has issued what precedes the template by `host_offsets` holds back an op
// of `schedule` (simulated with every host ahead). An op of an in_order stream starts the
// instant it is ready, so a host that issues each op by then changes nothing.
bool host_holds_back(const TemplateSchedule& schedule, std::span<const TimeNs> host_offsets) {
  for (std::size_t j = 0; j < host_offsets.size(); ++j) {
    if (host_offsets[j] != kHostAhead && host_offsets[j] > schedule.host_slack[j]) return true;
  }
  return false;
}

}  // namespace

std::shared_ptr<const TemplateSchedule> TemplateScheduler::schedule(const Subgraph& subgraph,
                                                                    std::span<const TimeNs> offsets,
                                                                    std::span<const TimeNs> host_offsets) {
  // Inside a template's simulation a lookup is part of that simulation's time.
  if (templates_being_simulated > 0) return look_up(subgraph, offsets, host_offsets);
  if (lookups_++ % ScheduleCache::kTimedLookupEvery != 0) return look_up(subgraph, offsets, host_offsets);
  // Sampled: the quick lookups, those the schedules this run already found answer. The rest,
  // which look in the shared cache or simulate, are timed each, by timed_find_or_simulate.
  const std::int64_t searched_before = searched_ns_;
  const Clock::time_point start = Clock::now();
  std::shared_ptr<const TemplateSchedule> found = look_up(subgraph, offsets, host_offsets);
  ++timed_lookups_;
  timed_lookup_ns_ +=
      std::max<std::int64_t>(0, nanoseconds_since(start) - clock_read_ns() - (searched_ns_ - searched_before));
  return found;
}

std::shared_ptr<const TemplateSchedule> TemplateScheduler::timed_find_or_simulate(
    const Subgraph& subgraph, std::vector<TimeNs> offsets, std::span<const TimeNs> host_offsets) {
  if (templates_being_simulated > 0) return find_or_simulate(subgraph, std::move(offsets), host_offsets);
  const std::int64_t simulated_before = simulation_ns_;
  const Clock::time_point start = Clock::now();
  std::shared_ptr<const TemplateSchedule> found = find_or_simulate(subgraph, std::move(offsets), host_offsets);
  const std::int64_t spent = nanoseconds_since(start);
  searched_ns_ += spent;
  cache_search_ns_ += spent - (simulation_ns_ - simulated_before);
  return found;
}

std::shared_ptr<const TemplateSchedule> TemplateScheduler::look_up(const Subgraph& subgraph,
                                                                   std::span<const TimeNs> offsets,
                                                                   std::span<const TimeNs> host_offsets) {
  // The usual case, a template whose streams are free and whose hosts are ahead, allocates nothing.
  auto hosts_ahead = [&] { return std::vector<TimeNs>(offsets.size(), kHostAhead); };
  std::shared_ptr<const TemplateSchedule>& unshifted = unshifted_[&subgraph];
  if (unshifted) {
    ++remembered_hits_;
  } else {
    unshifted = timed_find_or_simulate(subgraph, std::vector<TimeNs>(offsets.size(), 0), hosts_ahead());
  }
  // Streams that free before their first op would start anyway change nothing.
  bool shifted = false;
  for (std::size_t j = 0; j < offsets.size(); ++j) shifted = shifted || offsets[j] > unshifted->stream_first_start[j];
  std::shared_ptr<const TemplateSchedule> free_host =
      shifted ? timed_find_or_simulate(subgraph, {offsets.begin(), offsets.end()}, hosts_ahead()) : unshifted;
  if (!host_holds_back(*free_host, host_offsets)) return free_host;
  return timed_find_or_simulate(subgraph, {offsets.begin(), offsets.end()}, host_offsets);
}

std::shared_ptr<const TemplateSchedule> TemplateScheduler::find_or_simulate(const Subgraph& subgraph,
                                                                            std::vector<TimeNs> offsets,
                                                                            std::span<const TimeNs> host_offsets) {
  ScheduleKey key{subgraph.structure_hash(), durations_hash(subgraph), std::move(offsets)};
  // A schedule with every host ahead is keyed by the stream offsets alone.
  const bool host_binds =
      std::any_of(host_offsets.begin(), host_offsets.end(), [](TimeNs t) { return t != kHostAhead; });
  if (host_binds) key.stream_offsets.insert(key.stream_offsets.end(), host_offsets.begin(), host_offsets.end());
  if (auto found = cache_.find(key)) return found;
  SimulationOptions options = options_;
  options.record_memory_timeline = true;
  options.stream_available.assign(key.stream_offsets.begin(), key.stream_offsets.begin() + host_offsets.size());
  options.host_issued_until.assign(host_offsets.begin(), host_offsets.end());
  const Clock::time_point start = Clock::now();
  TemplateRecording recording{&subgraph, {}};
  SimulationResult result;
  {
    const SimulatingTemplate simulating;
    result = simulate_graph(subgraph.graph(), cost_model_, options, cache_, &recording);
  }
  TemplateSchedule made = make_template_schedule(subgraph, result, recording);
  made.host_slack = host_slack(subgraph, made);
  auto schedule = std::make_shared<const TemplateSchedule>(std::move(made));
  cache_.insert(std::move(key), schedule);
  if (templates_being_simulated == 0) {
    const std::int64_t ns = nanoseconds_since(start);
    simulation_ns_ += ns;
    cache_.add_simulation_time(ns);
  }
  return schedule;
}

TimeNs TemplateScheduler::issued_host_ns(const Subgraph& subgraph, std::size_t stream) {
  if (auto it = issued_host_.find(&subgraph); it != issued_host_.end()) return it->second[stream];
  const Graph& graph = subgraph.graph();
  const OpDurations duration(graph, cost_model_);
  std::vector<TimeNs> issued(graph.stream_count(), 0);
  for (std::size_t i = 0; i < graph.op_count(); ++i) {
    const OpId op = OpId::at(i);
    const CompositeId composite = graph.op_composite(op);
    if (!composite.valid()) {
      issued[graph.op_stream(op).value()] += duration.host_issue(op);
      continue;
    }
    const Subgraph& nested = graph.subgraph(graph.composite(composite).subgraph);
    const auto streams = graph.composite_streams(composite);
    for (std::size_t j = 0; j < streams.size(); ++j) issued[streams[j].value()] += issued_host_ns(nested, j);
  }
  return issued_host_.emplace(&subgraph, std::move(issued)).first->second[stream];
}

// The host issues a stream's ops in id order, each in its class's host_issue_ns: an op of stream j
// is issued at x + (its own and earlier ops' host time) when the host had issued what precedes the
// template at x, and it is not held back while that is no later than its start. A schedule folded
// from an expanded simulation has no slack of its own yet: it is derived here as well.
std::vector<TimeNs> TemplateScheduler::host_slack(const Subgraph& subgraph, const TemplateSchedule& schedule) {
  if (!schedule.host_slack.empty()) return schedule.host_slack;
  const Graph& graph = subgraph.graph();
  const OpDurations duration(graph, cost_model_);
  std::vector<TimeNs> issued(graph.stream_count(), 0);
  std::vector<TimeNs> slack(graph.stream_count(), std::numeric_limits<TimeNs>::max());
  for (std::size_t i = 0; i < graph.op_count(); ++i) {
    const OpId op = OpId::at(i);
    const CompositeId composite = graph.op_composite(op);
    if (!composite.valid()) {
      const std::size_t s = graph.op_stream(op).value();
      if (!duration.host_issued(StreamId::at(s))) continue;
      issued[s] += duration.host_issue(op);
      slack[s] = std::min(slack[s], schedule.op_start[i] - issued[s]);
      continue;
    }
    const TemplateSchedule& nested = *schedule.nested[i];
    const TimeNs origin = schedule.op_start[i] - nested.earliest_start;
    const Subgraph& inner = graph.subgraph(graph.composite(composite).subgraph);
    const std::vector<TimeNs> inner_slack = host_slack(inner, nested);
    const auto streams = graph.composite_streams(composite);
    for (std::size_t j = 0; j < streams.size(); ++j) {
      const std::size_t s = streams[j].value();
      if (!duration.host_issued(streams[j])) continue;
      if (inner_slack[j] != std::numeric_limits<TimeNs>::max())
        slack[s] = std::min(slack[s], origin + inner_slack[j] - issued[s]);
      issued[s] += issued_host_ns(inner, j);
    }
  }
  return slack;
}

}  // namespace weft
