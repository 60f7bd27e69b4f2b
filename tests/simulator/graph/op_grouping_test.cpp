// Wrapping groups of ops into composites of shared templates keeps a graph's answer: on a hand
// example of identical layers, and on random graphs with random groups, the wrapped graph
// simulates (with reuse) to the same makespan, busy times and memory timelines as the original
// op by op, and flattening it gives every stream the same op times.
#include <catch2/catch.hpp>

#include <algorithm>
#include <map>
#include <random>

#include "simulator/engine/engine.hpp"
#include "simulator/graph/flatten.hpp"
#include "simulator/graph/op_grouping.hpp"
#include "tests/support/random_graph.hpp"
#include "tests/support/simulation_comparison.hpp"
#include "tests/support/unit_platform.hpp"

namespace weft {
namespace {

using test::UnitPlatform;

// Per stream, the (start, end) of its ops in time order.
std::map<std::uint32_t, std::vector<std::pair<TimeNs, TimeNs>>> stream_times(const Graph& graph,
                                                                             const SimulationResult& result) {
  std::map<std::uint32_t, std::vector<std::pair<TimeNs, TimeNs>>> times;
  for (std::size_t i = 0; i < graph.op_count(); ++i) {
    const OpId op = OpId::at(i);
    times[graph.op_stream(op).value()].emplace_back(result.start(op), result.end(op));
  }
  for (auto& [stream, spans] : times) std::sort(spans.begin(), spans.end());
  return times;
}

SimulationResult simulate_op_by_op(const Graph& graph, const CostModel& cost_model) {
  SimulationOptions options;
  options.record_memory_timeline = true;
  options.reuse = false;
  return simulate(graph, cost_model, options);
}

// Checks that `wrapped` answers as `original` does, with reuse and expanded.
void require_same_answer(const Graph& original, const Graph& wrapped, const CostModel& cost_model) {
  const SimulationResult expected = simulate_op_by_op(original, cost_model);
  SimulationOptions options;
  options.record_memory_timeline = true;
  ScheduleCache cache;
  options.cache = &cache;
  const SimulationResult reused = simulate(wrapped, cost_model, options);
  REQUIRE(reused.makespan == expected.makespan);
  test::require_same_devices(reused, expected);
  const FlatGraph flat = flatten(wrapped);
  REQUIRE(stream_times(flat.graph, simulate_op_by_op(flat.graph, cost_model)) == stream_times(original, expected));
}

// Three identical layers (a 10 ns GEMM on compute, then a 5 ns all-reduce on comm) and a loss.
struct Layers {
  UnitPlatform platform;
  DeviceId gpu = platform.add_gpu("gpu");
  std::vector<OpId> a, b;
  OpId loss;
  Layers() {
    TensorId x = platform.tensor("x", gpu, 50);
    for (int i = 0; i < 3; ++i) {
      const std::string layer = "L" + std::to_string(i) + ".";
      a.push_back(platform.op(layer + "a", platform.compute(gpu), 10));
      b.push_back(platform.op(layer + "b", platform.comm(gpu), 5, OpClass::allreduce));
      platform.builder().add_input(a.back(), x);
      const TensorId h = platform.tensor(layer + "h", gpu, 100);
      platform.builder().add_output(a.back(), h);
      platform.builder().add_input(b.back(), h);
      x = platform.tensor(layer + "y", gpu, 50);
      platform.builder().add_output(b.back(), x);
    }
    loss = platform.op("loss", platform.compute(gpu), 1);
    platform.builder().add_input(loss, x);
  }
  std::vector<std::uint32_t> by_layer() const { return {0, 0, 1, 1, 2, 2, kNoGroup}; }
};

TEST_CASE("identical layers share one template and keep the graph's answer", "[graph][grouping]") {
  Layers layers;
  TemplateParts parts{layers.platform.build(), {}, {}, {}, {}};
  GroupTemplates templates;
  const TemplateParts wrapped = wrap_op_groups(parts, layers.by_layer(), templates);
  CHECK(templates.size() == 1);
  REQUIRE(wrapped.graph.composite_count() == 3);
  CHECK(wrapped.graph.op_count() == 4);
  CHECK(wrapped.graph.op_name(OpId::at(1)) == "L1");
  const Subgraph& layer = wrapped.graph.subgraph(wrapped.graph.composite(CompositeId::at(0)).subgraph);
  CHECK(layer.graph().op_name(OpId::at(0)) == "a");
  CHECK(layer.inputs().size() == 1);   // x
  CHECK(layer.outputs().size() == 1);  // y; the 100-byte tensor between a and b lives inside
  // a0 0-10, b0 10-15, a1 15-25, b1 25-30, a2 30-40, b2 40-45, loss 45-46.
  SimulationOptions options;
  const SimulationResult result = simulate(wrapped.graph, layers.platform.cost_model(), options);
  CHECK(result.makespan == 46);
  CHECK(result.reused_subgraphs);
  require_same_answer(parts.graph, wrapped.graph, layers.platform.cost_model());
  const FlatGraph flat = flatten(wrapped.graph);
  CHECK(flat.graph.op_name(OpId::at(2)) == "L1/a");
}

TEST_CASE("groups that would change the graph's meaning keep their ops", "[graph][grouping]") {
  Layers layers;
  std::vector<std::uint32_t> groups = layers.by_layer();
  SECTION("a control edge across a group's boundary") {
    layers.platform.builder().add_control_edge(layers.a[0], layers.b[1]);
    TemplateParts parts{layers.platform.build(), {}, {}, {}, {}};
    GroupTemplates templates;
    const TemplateParts wrapped = wrap_op_groups(parts, groups, templates);
    CHECK(wrapped.graph.composite_count() == 1);  // only L2
    require_same_answer(parts.graph, wrapped.graph, layers.platform.cost_model());
  }
  SECTION("another op issued on one of its streams between its ops") {
    // p (compute) and r (comm, reads p) form a group; q, on comm, is issued between them and
    // would run after r if the composite took r's place before it.
    UnitPlatform platform;
    const DeviceId gpu = platform.add_gpu("gpu");
    const OpId p = platform.op("p", platform.compute(gpu), 10);
    platform.op("q", platform.comm(gpu), 4);
    const OpId r = platform.op("r", platform.comm(gpu), 5);
    platform.connect(p, r, 8);
    TemplateParts parts{platform.build(), {}, {}, {}, {}};
    GroupTemplates templates;
    const TemplateParts wrapped = wrap_op_groups(parts, std::vector<std::uint32_t>{0, kNoGroup, 0}, templates);
    CHECK(wrapped.graph.composite_count() == 0);
    require_same_answer(parts.graph, wrapped.graph, platform.cost_model());
  }
  SECTION("a path that leaves the group and comes back") {
    groups = {0, 1, 0, 1, 2, 2, kNoGroup};  // a0 with a1, b0 with b1: a1 needs b0, which needs a0
    TemplateParts parts{layers.platform.build(), {}, {}, {}, {}};
    GroupTemplates templates;
    const TemplateParts wrapped = wrap_op_groups(parts, groups, templates);
    CHECK(wrapped.graph.composite_count() == 1);
    require_same_answer(parts.graph, wrapped.graph, layers.platform.cost_model());
  }
  SECTION("two groups that would wait for each other") {
    // g = {a, c} on the compute stream and h = {b, d} on the comm stream of one GPU: c reads b's
    // output and d reads a's. Each group passes every other rule.
    UnitPlatform platform;
    const DeviceId gpu = platform.add_gpu("gpu");
    std::vector<OpId> ops;  // a, b, c, d
    for (int i = 0; i < 4; ++i) {
      const StreamId stream = i % 2 == 0 ? platform.compute(gpu) : platform.comm(gpu);
      ops.push_back(platform.op(std::string(1, static_cast<char>('a' + i)), stream, 2 + i));
    }
    platform.connect(ops[1], ops[2], 8);
    platform.connect(ops[0], ops[3], 8);
    TemplateParts parts{platform.build(), {}, {}, {}, {}};
    GroupTemplates templates;
    const TemplateParts wrapped = wrap_op_groups(parts, std::vector<std::uint32_t>{0, 1, 0, 1}, templates);
    CHECK(wrapped.graph.composite_count() < 2);
    require_same_answer(parts.graph, wrapped.graph, platform.cost_model());
  }
  SECTION("a group that a collective's members would wait for on both sides") {
    // M (gpu0) feeds p; q (gpu1) feeds M's peer M' (gpu1). p and q share nothing, but as one
    // composite {p, q} would wait for M, which starts with M', which waits for q.
    UnitPlatform platform;
    const DeviceId gpu0 = platform.add_gpu("gpu0");
    const DeviceId gpu1 = platform.add_gpu("gpu1");
    const OpId m = platform.op("M", platform.comm(gpu0), 3, OpClass::allreduce);
    const OpId p = platform.op("p", platform.compute(gpu0), 4);
    const OpId q = platform.op("q", platform.compute(gpu1), 5);
    const OpId peer = platform.op("M'", platform.comm(gpu1), 3, OpClass::allreduce);
    platform.connect(m, p, 8);
    platform.connect(q, peer, 8);
    const std::vector<OpId> members = {m, peer};
    platform.builder().add_collective("M", members);
    TemplateParts parts{platform.build(), {}, {}, {}, {}};
    GroupTemplates templates;
    const TemplateParts wrapped =
        wrap_op_groups(parts, std::vector<std::uint32_t>{kNoGroup, 0, 0, kNoGroup}, templates);
    CHECK(wrapped.graph.composite_count() == 0);
    require_same_answer(parts.graph, wrapped.graph, platform.cost_model());
  }
  SECTION("a group of one op") {
    groups = {0, 0, 1, 2, 3, 3, kNoGroup};
    TemplateParts parts{layers.platform.build(), {}, {}, {}, {}};
    GroupTemplates templates;
    const TemplateParts wrapped = wrap_op_groups(parts, groups, templates);
    CHECK(wrapped.graph.composite_count() == 2);
    CHECK(templates.size() == 1);
  }
}

TEST_CASE("layers that differ in work get templates of their own", "[graph][grouping]") {
  UnitPlatform platform;
  const DeviceId gpu = platform.add_gpu("gpu");
  const OpId first = platform.op("L0.a", platform.compute(gpu), 10);
  const OpId second = platform.op("L0.b", platform.compute(gpu), 10);
  platform.connect(first, second, 8);
  const OpId third = platform.op("L1.a", platform.compute(gpu), 10);
  const OpId fourth = platform.op("L1.b", platform.compute(gpu), 20);
  platform.connect(second, third, 8);
  platform.connect(third, fourth, 8);
  TemplateParts parts{platform.build(), {}, {}, {}, {}};
  GroupTemplates templates;
  const TemplateParts wrapped = wrap_op_groups(parts, std::vector<std::uint32_t>{0, 0, 1, 1}, templates);
  CHECK(wrapped.graph.composite_count() == 2);
  CHECK(templates.size() == 2);
  require_same_answer(parts.graph, wrapped.graph, platform.cost_model());
}

TEST_CASE("wrapping random groups of random graphs keeps their answer", "[graph][grouping][property]") {
  int wrapped_groups = 0;
  for (std::uint64_t seed = 0; seed < 400; ++seed) {
    INFO("seed " << seed);
    test::RandomGraphShape shape;
    shape.op_count = 60;
    shape.gpu_count = 2;
    shape.link_count = seed % 3 == 0 ? 1 : 0;
    shape.collective_share = seed % 2 == 0 ? 0.1 : 0.0;
    shape.control_share = 0.05;
    shape.tensors_on_reader = true;
    const test::RandomGraph random = test::make_random_graph(seed, shape);
    // Runs of consecutive ops share a label; some ops have none, and some labels come back later.
    std::mt19937_64 rng(seed);
    std::vector<std::uint32_t> groups;
    std::uint32_t label = 0;
    for (std::size_t i = 0; i < random.graph.op_count(); ++i) {
      const int dice = std::uniform_int_distribution<int>(0, 9)(rng);
      if (dice < 3) ++label;
      groups.push_back(dice == 9 ? kNoGroup : dice == 8 ? label / 2 : label);
    }
    TemplateParts parts{random.graph, {}, {}, {}, {}};
    GroupTemplates templates;
    const TemplateParts wrapped = wrap_op_groups(parts, groups, templates);
    wrapped_groups += static_cast<int>(wrapped.graph.composite_count());
    require_same_answer(random.graph, wrapped.graph, random.cost_model);
  }
  WARN("groups wrapped: " << wrapped_groups);
  CHECK(wrapped_groups > 1000);
}

}  // namespace
}  // namespace weft
