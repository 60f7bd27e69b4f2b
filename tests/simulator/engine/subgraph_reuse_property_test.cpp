// Reuse must be exact: on random graphs of random templates (bundles between composites
// included), simulating with composites stamped from simulated templates gives the same integer
// times, memory and busy time as simulating every op of the expanded graph.
#include <catch2/catch.hpp>

#include <algorithm>
#include <utility>

#include "simulator/engine/engine.hpp"
#include "simulator/graph/subgraph.hpp"
#include "tests/support/random_composite_graph.hpp"
#include "tests/support/simulation_comparison.hpp"

namespace weft {
namespace {

using test::all_op_times;
using test::make_random_composite_graph;
using test::require_same_devices;

constexpr int kRandomGraphs = 5000;

// Bundles that a composite hands to another.
int bundles_passed(const Graph& graph) {
  int count = 0;
  for (std::size_t t = 0; t < graph.tensor_count(); ++t) {
    const TensorId tensor(static_cast<TensorId::value_type>(t));
    count += graph.tensor_kind(tensor) == TensorKind::bundle && !graph.tensor_consumers(tensor).empty() ? 1 : 0;
  }
  return count;
}

// `graph` simulated with reuse (templates kept in `cache`), then with every op.
std::pair<SimulationResult, SimulationResult> simulate_both(const Graph& graph, const CostModel& cost_model,
                                                            ScheduleCache& cache) {
  SimulationOptions options;
  options.record_memory_timeline = true;
  options.cache = &cache;
  SimulationResult reused = simulate(graph, cost_model, options);
  options.reuse = false;
  return {std::move(reused), simulate(graph, cost_model, options)};
}

TEST_CASE("reusing simulated templates gives exactly the expanded simulation's answer", "[engine][reuse]") {
  ScheduleCache cache;  // shared by every case: templates of one case must not answer for another
  int reused_runs = 0;
  int composites = 0;
  int reused_bundles = 0;
  for (int seed = 0; seed < kRandomGraphs; ++seed) {
    INFO("seed " << seed);
    const auto random = make_random_composite_graph(static_cast<std::uint64_t>(seed));
    const auto [reused, full] = simulate_both(random.graph, random.cost_model, cache);
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
  WARN("runs reused: " << reused_runs << " of " << kRandomGraphs << ", composites " << composites
                       << ", bundles passed in "
                       << "reused runs " << reused_bundles << ", cache hits " << stats.hits << ", misses "
                       << stats.misses << ", fallbacks " << stats.fallbacks);
  CHECK(reused_runs > kRandomGraphs / 5);
  CHECK(reused_bundles > kRandomGraphs / 20);
  CHECK(stats.fallbacks > 0);
  CHECK(stats.hits > 0);
}

// Templates whose ops are wrapped in nested templates of random groups: bundle members are made
// and read by nested composites, signals fire inside them, and the answer is that of the same
// graph without the nesting, with reuse and expanded.
TEST_CASE("nesting groups of a template's ops in templates changes no answer", "[engine][reuse][grouping]") {
  ScheduleCache cache;
  int reused_runs = 0;
  int nested_members = 0;
  int nested_signals = 0;
  for (int seed = 0; seed < kRandomGraphs / 5; ++seed) {
    INFO("seed " << seed);
    const auto plain = make_random_composite_graph(static_cast<std::uint64_t>(seed));
    const auto nested = make_random_composite_graph(static_cast<std::uint64_t>(seed), true);
    const auto [reused, expanded] = simulate_both(nested.graph, nested.cost_model, cache);
    SimulationOptions every_op;
    every_op.record_memory_timeline = true;
    every_op.reuse = false;
    const SimulationResult expected = simulate(plain.graph, plain.cost_model, every_op);
    REQUIRE(expanded.makespan == expected.makespan);
    REQUIRE(reused.makespan == expected.makespan);
    require_same_devices(reused, expected);
    require_same_devices(expanded, expected);
    REQUIRE(all_op_times(nested.graph, reused) == all_op_times(nested.graph, expanded));
    reused_runs += reused.reused_subgraphs ? 1 : 0;
    for (const auto& made : nested.templates) {
      const Graph& inner = made->graph();
      for (const Subgraph::Signal& signal : made->signals()) nested_signals += signal.inner >= 0 ? 1 : 0;
      for (const auto* ports : {&made->inputs(), &made->outputs()}) {
        for (TensorId port : *ports) {
          for (TensorId member : made->bundle_members(port)) {
            const OpId producer = inner.tensor_producer(member);
            const auto readers = inner.tensor_consumers(member);
            const bool by_composite =
                (producer.valid() && inner.is_composite(producer)) ||
                std::any_of(readers.begin(), readers.end(), [&](OpId reader) { return inner.is_composite(reader); });
            nested_members += by_composite ? 1 : 0;
          }
        }
      }
    }
  }
  WARN("runs reused: " << reused_runs << " of " << kRandomGraphs / 5 << ", bundle members made or read by nested "
                       << "composites " << nested_members << ", nested signals " << nested_signals);
  CHECK(reused_runs > kRandomGraphs / 25);
  CHECK(nested_members > 100);
  CHECK(nested_signals > 50);
}

}  // namespace
}  // namespace weft
