// Reuse must be exact: on random graphs of random templates (bundles between composites
// included), simulating with composites stamped from simulated templates gives the same integer
// times, memory and busy time as simulating every op of the expanded graph.
#include <catch2/catch.hpp>

#include "simulator/engine/engine.hpp"
#include "simulator/graph/subgraph.hpp"
#include "tests/support/random_composite_graph.hpp"
#include "tests/support/simulation_comparison.hpp"

namespace weft {
namespace {

using test::all_op_times;
using test::make_random_composite_graph;
using test::require_same_devices;

constexpr int kCases = 5000;

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
