// Checks the engine against computations that do not share its code: Boost.Graph's DAG
// shortest paths for graphs without contention, and a re-derivation of every op's start from the
// scheduling rules for graphs with collectives and shared links.
#include <algorithm>
#include <limits>
#include <map>

#include <boost/graph/adjacency_list.hpp>
#include <boost/graph/dag_shortest_paths.hpp>
#include <catch2/catch.hpp>

#include "simulator/engine/critical_path.hpp"
#include "simulator/engine/engine.hpp"
#include "tests/support/random_graph.hpp"

namespace weft {
namespace {

using test::make_random_graph;
using test::RandomGraphShape;

OpId op_id(std::size_t i) { return OpId(static_cast<OpId::value_type>(i)); }

// Predecessors of every op, gathered from the graph's public accessors.
std::vector<std::vector<OpId>> predecessors(const Graph& graph) {
  std::vector<std::vector<OpId>> preds(graph.op_count());
  for (std::size_t i = 0; i < graph.op_count(); ++i) {
    graph.for_each_successor(op_id(i), [&](OpId successor) { preds[successor.value()].push_back(op_id(i)); });
  }
  return preds;
}

// Longest path to each op's start, by Boost's DAG shortest paths over negated weights from a
// super source linked to every op.
std::vector<TimeNs> longest_path_starts(const Graph& graph, const std::vector<TimeNs>& duration) {
  using BoostGraph = boost::adjacency_list<boost::vecS, boost::vecS, boost::directedS, boost::no_property,
                                           boost::property<boost::edge_weight_t, double>>;
  const std::size_t n = graph.op_count();
  BoostGraph g(n + 1);
  for (std::size_t i = 0; i < n; ++i) {
    boost::add_edge(n, i, 0.0, g);
    graph.for_each_successor(
        op_id(i), [&](OpId successor) { boost::add_edge(i, successor.value(), -static_cast<double>(duration[i]), g); });
  }
  std::vector<double> distance(n + 1);
  boost::dag_shortest_paths(g, n, boost::distance_map(distance.data()));
  std::vector<TimeNs> start(n);
  for (std::size_t i = 0; i < n; ++i) start[i] = static_cast<TimeNs>(-distance[i]);
  return start;
}

// Re-derives each op's start from the rules and the result's own end times: an op is ready when
// its last predecessor ends; in_order ops start when ready; a collective when its last member is
// ready; a first_ready stream takes ops in (ready, id) order, each when ready and the previous
// one has ended. Describes the first op whose start or duration disagrees; empty if none does.
std::string first_rule_violation(const Graph& graph, const std::vector<TimeNs>& duration,
                                 const SimulationResult& result) {
  const auto preds = predecessors(graph);
  std::vector<TimeNs> ready(graph.op_count(), 0);
  for (std::size_t i = 0; i < graph.op_count(); ++i) {
    for (OpId pred : preds[i]) ready[i] = std::max(ready[i], result.end(pred));
  }
  std::vector<TimeNs> expected(graph.op_count(), 0);
  std::map<std::uint32_t, std::vector<OpId>> shared_streams;
  for (std::size_t i = 0; i < graph.op_count(); ++i) {
    const OpId op = op_id(i);
    if (const CollectiveId collective = graph.op_collective(op); collective.valid()) {
      for (OpId member : graph.collective_members(collective))
        expected[i] = std::max(expected[i], ready[member.value()]);
    } else if (graph.stream(graph.op_stream(op)).policy == StreamPolicy::first_ready) {
      shared_streams[graph.op_stream(op).value()].push_back(op);
    } else {
      expected[i] = ready[i];
    }
  }
  for (auto& [stream, ops] : shared_streams) {
    std::sort(ops.begin(), ops.end(), [&](OpId a, OpId b) {
      return ready[a.value()] != ready[b.value()] ? ready[a.value()] < ready[b.value()] : a < b;
    });
    TimeNs free_at = 0;
    for (OpId op : ops) {
      expected[op.value()] = std::max(ready[op.value()], free_at);
      free_at = expected[op.value()] + duration[op.value()];
    }
  }
  for (std::size_t i = 0; i < graph.op_count(); ++i) {
    const OpId op = op_id(i);
    if (result.start(op) == expected[i] && result.duration(op) == duration[i]) continue;
    return graph.display_name(op) + ": start " + std::to_string(result.start(op)) + " (expected " +
           std::to_string(expected[i]) + ", ready at " + std::to_string(ready[i]) + "), duration " +
           std::to_string(result.duration(op)) + " (expected " + std::to_string(duration[i]) + ")";
  }
  return {};
}

TEST_CASE("without contention the engine's starts are DAG longest paths (Boost.Graph)", "[engine][property]") {
  for (std::uint64_t seed = 1; seed <= 300; ++seed) {
    RandomGraphShape shape;
    shape.op_count = 1 + static_cast<int>(seed % 150);
    shape.gpu_count = 1 + static_cast<int>(seed % 4);
    const auto random = make_random_graph(seed, shape);
    const SimulationResult result = simulate(random.graph, random.cost_model);
    const std::vector<TimeNs> expected = longest_path_starts(random.graph, random.duration);
    INFO("seed " << seed);
    REQUIRE(result.op_start == expected);
    TimeNs makespan = 0;
    for (std::size_t i = 0; i < expected.size(); ++i) makespan = std::max(makespan, expected[i] + random.duration[i]);
    REQUIRE(result.makespan == makespan);
  }
}

TEST_CASE("with collectives and shared links every start follows the scheduling rules", "[engine][property]") {
  for (std::uint64_t seed = 1; seed <= 300; ++seed) {
    RandomGraphShape shape;
    shape.op_count = 1 + static_cast<int>(seed % 200);
    shape.gpu_count = 2 + static_cast<int>(seed % 4);
    shape.link_count = static_cast<int>(seed % 3);
    shape.collective_share = 0.1;
    const auto random = make_random_graph(seed, shape);
    const SimulationResult result = simulate(random.graph, random.cost_model);
    INFO("seed " << seed);
    const std::string violation = first_rule_violation(random.graph, random.duration, result);
    INFO(violation);
    REQUIRE(violation.empty());
  }
}

TEST_CASE("the critical path is contiguous and as long as the makespan", "[engine][property]") {
  for (std::uint64_t seed = 1; seed <= 200; ++seed) {
    RandomGraphShape shape;
    shape.op_count = 1 + static_cast<int>(seed % 120);
    shape.gpu_count = 2 + static_cast<int>(seed % 3);
    shape.link_count = static_cast<int>(seed % 2);
    shape.collective_share = 0.1;
    const auto random = make_random_graph(seed, shape);
    const SimulationResult result = simulate(random.graph, random.cost_model);
    INFO("seed " << seed);
    REQUIRE_FALSE(result.critical_path.empty());
    CHECK(result.start(result.critical_path.front()) == 0);
    CHECK(result.end(result.critical_path.back()) == result.makespan);
    for (std::size_t i = 1; i < result.critical_path.size(); ++i) {
      REQUIRE(result.start(result.critical_path[i]) == result.end(result.critical_path[i - 1]));
    }
    CHECK(summarize_critical_path(random.graph, result, 0).length == result.makespan);
  }
}

// Peak live bytes per device by sorting every tensor's [allocation, release) events, releases
// first at equal times.
std::vector<Bytes> peaks_by_sweep(const Graph& graph, const SimulationResult& result) {
  constexpr TimeNs kNever = std::numeric_limits<TimeNs>::max();
  std::vector<std::vector<std::pair<TimeNs, Bytes>>> events(graph.device_count());
  for (std::size_t i = 0; i < graph.tensor_count(); ++i) {
    const TensorId tensor(static_cast<TensorId::value_type>(i));
    const bool whole_run = lives_whole_run(graph.tensor_kind(tensor));
    const OpId producer = graph.tensor_producer(tensor);
    const TimeNs from = (producer.valid() && !whole_run) ? result.start(producer) : 0;
    TimeNs until = kNever;
    if (!whole_run && !graph.tensor_consumers(tensor).empty()) {
      until = 0;
      for (OpId consumer : graph.tensor_consumers(tensor)) until = std::max(until, result.end(consumer));
    }
    auto& device_events = events[graph.tensor_device(tensor).value()];
    device_events.emplace_back(from, graph.tensor_bytes(tensor));
    if (until != kNever) device_events.emplace_back(until, -graph.tensor_bytes(tensor));
  }
  std::vector<Bytes> peaks;
  for (auto& device_events : events) {
    std::sort(device_events.begin(), device_events.end());  // negative deltas first at equal times
    Bytes level = 0;
    Bytes peak = 0;
    for (const auto& [time, delta] : device_events) {
      level += delta;
      peak = std::max(peak, level);
    }
    peaks.push_back(peak);
  }
  return peaks;
}

TEST_CASE("peak memory equals a sort-based sweep over tensor lifetimes", "[engine][property][memory]") {
  for (std::uint64_t seed = 1; seed <= 200; ++seed) {
    RandomGraphShape shape;
    shape.op_count = 1 + static_cast<int>(seed % 150);
    shape.gpu_count = 1 + static_cast<int>(seed % 4);
    shape.link_count = static_cast<int>(seed % 2);
    const auto random = make_random_graph(seed, shape);
    const SimulationResult result = simulate(random.graph, random.cost_model);
    const std::vector<Bytes> expected = peaks_by_sweep(random.graph, result);
    INFO("seed " << seed);
    for (std::size_t d = 0; d < expected.size(); ++d) REQUIRE(result.devices[d].peak_memory == expected[d]);
  }
}

TEST_CASE("repeated runs give identical results", "[engine][property]") {
  RandomGraphShape shape;
  shape.op_count = 2000;
  shape.gpu_count = 6;
  shape.link_count = 2;
  shape.collective_share = 0.05;
  const auto random = make_random_graph(42, shape);
  SimulationOptions options;
  options.record_memory_timeline = true;
  const SimulationResult first = simulate(random.graph, random.cost_model, options);
  for (int run = 0; run < 3; ++run) {
    const SimulationResult again = simulate(random.graph, random.cost_model, options);
    CHECK(again.op_start == first.op_start);
    CHECK(again.op_end == first.op_end);
    CHECK(again.op_binding == first.op_binding);
    CHECK(again.critical_path == first.critical_path);
    for (std::size_t d = 0; d < first.devices.size(); ++d) {
      CHECK(again.devices[d].busy_ns == first.devices[d].busy_ns);
      CHECK(again.devices[d].peak_memory == first.devices[d].peak_memory);
      CHECK(again.devices[d].memory_timeline.size() == first.devices[d].memory_timeline.size());
    }
  }
}

}  // namespace
}  // namespace weft
