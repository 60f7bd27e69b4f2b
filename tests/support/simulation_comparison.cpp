#include "tests/support/simulation_comparison.hpp"

#include <catch2/catch.hpp>

namespace weft::test {
namespace {

void append_inner_times(const TemplateSchedule& schedule, TimeNs start, std::vector<TimeNs>& out) {
  const TimeNs origin = start - schedule.earliest_start;
  for (std::size_t i = 0; i < schedule.op_start.size(); ++i) {
    out.push_back(origin + schedule.op_start[i]);
    out.push_back(origin + schedule.op_end[i]);
    if (schedule.nested[i]) append_inner_times(*schedule.nested[i], origin + schedule.op_start[i], out);
  }
}

void append_op_times(const Graph& graph, const SimulationResult& result, OpId op, std::vector<TimeNs>& out) {
  out.push_back(result.start(op));
  out.push_back(result.end(op));
  if (const CompositeId composite = graph.op_composite(op); composite.valid()) {
    append_inner_times(*result.composite_schedules[composite.value()], result.start(op), out);
  }
}

}  // namespace

std::vector<TimeNs> all_op_times(const Graph& graph, const SimulationResult& result) {
  std::vector<TimeNs> times;
  for (std::size_t i = 0; i < graph.op_count(); ++i) {
    append_op_times(graph, result, OpId(static_cast<OpId::value_type>(i)), times);
  }
  return times;
}

void require_same_devices(const SimulationResult& a, const SimulationResult& b) {
  REQUIRE(a.devices.size() == b.devices.size());
  for (std::size_t d = 0; d < b.devices.size(); ++d) {
    INFO("device " << d);
    const DeviceResult& x = a.devices[d];
    const DeviceResult& y = b.devices[d];
    REQUIRE(x.busy_ns == y.busy_ns);
    REQUIRE(x.busy_by_category == y.busy_by_category);
    require_same_memory(x, y);
  }
}

void require_same_memory(const DeviceResult& a, const DeviceResult& b) {
  REQUIRE(a.peak_memory == b.peak_memory);
  REQUIRE(a.peak_memory_time == b.peak_memory_time);
  REQUIRE(a.memory_timeline.size() == b.memory_timeline.size());
  for (std::size_t k = 0; k < a.memory_timeline.size(); ++k) {
    REQUIRE(a.memory_timeline[k].time == b.memory_timeline[k].time);
    REQUIRE(a.memory_timeline[k].bytes == b.memory_timeline[k].bytes);
  }
}

SimulationResult simulate_with(const Graph& graph, const CostModel& cost_model, bool reuse, ScheduleCache& cache) {
  SimulationOptions options;
  options.record_memory_timeline = true;
  options.reuse = reuse;
  options.cache = &cache;
  return simulate(graph, cost_model, options);
}

SimulationResult require_reuse_exact(const Graph& graph, const CostModel& cost_model, ScheduleCache& cache) {
  SimulationResult reused = simulate_with(graph, cost_model, true, cache);
  const SimulationResult expanded = simulate_with(graph, cost_model, false, cache);
  REQUIRE(reused.makespan == expanded.makespan);
  REQUIRE(all_op_times(graph, reused) == all_op_times(graph, expanded));
  require_same_devices(reused, expanded);
  return reused;
}

}  // namespace weft::test
