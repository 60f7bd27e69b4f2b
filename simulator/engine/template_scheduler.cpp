#include "simulator/engine/template_scheduler.hpp"

#include "simulator/core/hash_mix.hpp"
#include "simulator/engine/op_durations.hpp"
#include "simulator/engine/simulation.hpp"

namespace weft {
namespace {

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
      value = static_cast<std::uint64_t>(duration(op));
    }
    hash = hash_mix(hash, value);
  }
  durations_.emplace(&subgraph, hash);
  return hash;
}

std::shared_ptr<const TemplateSchedule> TemplateScheduler::schedule(const Subgraph& subgraph,
                                                                    std::span<const TimeNs> offsets) {
  std::shared_ptr<const TemplateSchedule>& unshifted = unshifted_[&subgraph];
  if (unshifted) {
    ++remembered_hits_;
  } else {
    unshifted = find_or_simulate(subgraph, std::vector<TimeNs>(offsets.size(), 0));
  }
  // Streams that free before their first op would start anyway change nothing.
  bool shifted = false;
  for (std::size_t j = 0; j < offsets.size(); ++j) shifted = shifted || offsets[j] > unshifted->stream_first_start[j];
  return shifted ? find_or_simulate(subgraph, {offsets.begin(), offsets.end()}) : unshifted;
}

std::shared_ptr<const TemplateSchedule> TemplateScheduler::find_or_simulate(const Subgraph& subgraph,
                                                                            std::vector<TimeNs> offsets) {
  ScheduleKey key{subgraph.structure_hash(), durations_hash(subgraph), std::move(offsets)};
  if (auto found = cache_.find(key)) return found;
  SimulationOptions options = options_;
  options.record_memory_timeline = true;
  options.stream_available = key.stream_offsets;
  TemplateRecording recording{&subgraph, {}};
  SimulationResult result = simulate_graph(subgraph.graph(), cost_model_, options, cache_, &recording);
  auto schedule = std::make_shared<const TemplateSchedule>(make_template_schedule(subgraph, result, recording));
  cache_.insert(std::move(key), schedule);
  return schedule;
}

}  // namespace weft
