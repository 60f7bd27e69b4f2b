// Reuse must be exact: on random graphs of random templates (bundles between composites
// included), simulating with composites stamped from simulated templates gives the same integer
// times, memory and busy time as simulating every op of the expanded graph.
#include <catch2/catch.hpp>

#include "simulator/engine/engine.hpp"
#include "simulator/graph/subgraph.hpp"
#include "tests/support/random_composite_graph.hpp"

namespace weft {
namespace {

using test::make_random_composite_graph;

constexpr int kCases = 5000;

// Every op inside `schedule` placed at its absolute time, depth first.
void append_inner_times(const TemplateSchedule& schedule, TimeNs start, std::vector<TimeNs>& out) {
  const TimeNs origin = start - schedule.earliest_start;
  for (std::size_t i = 0; i < schedule.op_start.size(); ++i) {
    out.push_back(origin + schedule.op_start[i]);
    out.push_back(origin + schedule.op_end[i]);
    if (schedule.nested[i]) append_inner_times(*schedule.nested[i], origin + schedule.op_start[i], out);
  }
}

std::vector<TimeNs> all_op_times(const Graph& graph, const SimulationResult& result) {
  std::vector<TimeNs> times;
  for (std::size_t i = 0; i < graph.op_count(); ++i) {
    const OpId op(static_cast<OpId::value_type>(i));
    times.push_back(result.start(op));
    times.push_back(result.end(op));
    if (const CompositeId composite = graph.op_composite(op); composite.valid()) {
      append_inner_times(*result.composite_schedules[composite.value()], result.start(op), times);
    }
  }
  return times;
}

void require_same_devices(const SimulationResult& reused, const SimulationResult& full) {
  REQUIRE(reused.devices.size() == full.devices.size());
  for (std::size_t d = 0; d < full.devices.size(); ++d) {
    INFO("device " << d);
    const DeviceResult& a = reused.devices[d];
    const DeviceResult& b = full.devices[d];
    REQUIRE(a.busy_ns == b.busy_ns);
    REQUIRE(a.busy_by_category == b.busy_by_category);
    REQUIRE(a.peak_memory == b.peak_memory);
    REQUIRE(a.peak_memory_time == b.peak_memory_time);
    REQUIRE(a.memory_timeline.size() == b.memory_timeline.size());
    for (std::size_t k = 0; k < a.memory_timeline.size(); ++k) {
      REQUIRE(a.memory_timeline[k].time == b.memory_timeline[k].time);
      REQUIRE(a.memory_timeline[k].bytes == b.memory_timeline[k].bytes);
    }
  }
}

// Bundles that a composite hands to another.
int bundles_passed(const Graph& graph) {
  int count = 0;
  for (std::size_t t = 0; t < graph.tensor_count(); ++t) {
    const TensorId tensor(static_cast<TensorId::value_type>(t));
    count += graph.tensor_kind(tensor) == TensorKind::bundle && !graph.tensor_consumers(tensor).empty() ? 1 : 0;
  }
  return count;
}

TEST_CASE("reusing simulated templates gives exactly the expanded simulation's answer", "[engine][reuse]") {
  ScheduleCache cache;  // shared by every case: templates of one case must not answer for another
  int reused_runs = 0;
  int composites = 0;
  int reused_bundles = 0;
  for (int seed = 0; seed < kCases; ++seed) {
    INFO("seed " << seed);
    const auto random = make_random_composite_graph(static_cast<std::uint64_t>(seed));
    SimulationOptions options;
    options.record_memory_timeline = true;
    options.cache = &cache;
    const SimulationResult reused = simulate(random.graph, random.cost_model, options);
    options.reuse = false;
    const SimulationResult full = simulate(random.graph, random.cost_model, options);
    REQUIRE_FALSE(full.reused_subgraphs);
    REQUIRE(reused.makespan == full.makespan);
    REQUIRE(all_op_times(random.graph, reused) == all_op_times(random.graph, full));
    require_same_devices(reused, full);
    if (reused.reused_subgraphs) {
      ++reused_runs;
      reused_bundles += bundles_passed(random.graph);
    }
    composites += static_cast<int>(random.graph.composite_count());
  }
  // Both paths must be exercised: many runs reuse throughout, others fall back somewhere.
  const ScheduleCacheStats stats = cache.stats();
  WARN("runs reused: " << reused_runs << " of " << kCases << ", composites " << composites << ", bundles passed in "
                       << "reused runs " << reused_bundles << ", cache hits " << stats.hits << ", misses "
                       << stats.misses << ", fallbacks " << stats.fallbacks);
  CHECK(reused_runs > kCases / 5);
  CHECK(reused_bundles > kCases / 20);
  CHECK(stats.fallbacks > 0);
  CHECK(stats.hits > 0);
}

}  // namespace
}  // namespace weft
