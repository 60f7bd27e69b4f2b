// The host that issues a stream's ops, against timelines worked out by hand on the unit platform
// (1 unit = 1 ns): the k-th op of a host-issued stream is issued at k * host_issue_ns and starts no
// earlier; the host never waits for the device.
#include <catch2/catch.hpp>

#include "simulator/core/input_error.hpp"
#include "simulator/engine/engine.hpp"
#include "simulator/graph/subgraph.hpp"
#include "tests/support/random_composite_graph.hpp"
#include "tests/support/simulation_comparison.hpp"
#include "tests/support/unit_platform.hpp"

namespace weft {
namespace {

using test::all_op_times;
using test::make_random_composite_graph;
using test::simulate_with;
using test::UnitPlatform;

TEST_CASE("kernels shorter than the host's issue time run one per issue", "[engine][host]") {
  UnitPlatform p(25);
  const DeviceId gpu = p.add_gpu("gpu");
  std::vector<OpId> ops;
  for (int k = 0; k < 5; ++k) ops.push_back(p.op("small", p.compute(gpu), 10));
  const RooflineCostModel cost_model = p.cost_model();
  const Graph graph = p.build();
  const SimulationResult result = simulate(graph, cost_model);
  // Issued at 25, 50, ..., 125; each runs 10 ns from its issue.
  for (std::size_t k = 0; k < ops.size(); ++k) {
    CHECK(result.start(ops[k]) == 25 * static_cast<TimeNs>(k + 1));
    CHECK(result.op_binding[ops[k].value()] == OpId::none());  // the host, not the previous kernel
  }
  CHECK(result.makespan == 5 * 25 + 10);
  CHECK(result.devices[gpu.value()].busy_ns == 50);
}

TEST_CASE("each op waits for its host to issue it in its class's time", "[engine][host]") {
  UnitPlatform p(20);  // a GEMM's issue 20 ns, an elementwise op's 10
  const DeviceId gpu = p.add_gpu("gpu");
  const OpId first = p.op("gemm", p.compute(gpu), 1);
  const OpId add = p.op("add", p.compute(gpu), 1, OpClass::elementwise);
  const OpId scale = p.op("scale", p.compute(gpu), 1, OpClass::elementwise);
  const OpId barrier = p.op("join", p.compute(gpu), 0, OpClass::barrier);
  const OpId last = p.op("gemm", p.compute(gpu), 1);
  const RooflineCostModel cost_model = p.cost_model();
  const Graph graph = p.build();
  const SimulationResult result = simulate(graph, cost_model);
  // Issued at 20, 30, 40, 40 (a barrier issues nothing) and 60; each starts when issued.
  CHECK(result.start(first) == 20);
  CHECK(result.start(add) == 30);
  CHECK(result.start(scale) == 40);
  CHECK(result.start(barrier) == 41);  // after `scale`, in stream order
  CHECK(result.start(last) == 60);
  CHECK(result.makespan == 61);
}

TEST_CASE("a host that got ahead during long kernels lets short ones run back to back", "[engine][host]") {
  UnitPlatform p(25);
  const DeviceId gpu = p.add_gpu("gpu");
  const OpId gemm = p.op("gemm", p.compute(gpu), 100);
  std::vector<OpId> small;
  for (int k = 0; k < 3; ++k) small.push_back(p.op("small", p.compute(gpu), 10));
  const OpId after = p.op("after", p.compute(gpu), 10);
  const RooflineCostModel cost_model = p.cost_model();
  const Graph graph = p.build();
  const SimulationResult result = simulate(graph, cost_model);
  // gemm issued at 25, runs [25, 125); the small ones were issued at 50, 75, 100: [125, 155).
  CHECK(result.start(gemm) == 25);
  CHECK(result.start(small[0]) == 125);
  CHECK(result.start(small[2]) == 145);
  CHECK(result.op_binding[small[0].value()] == gemm);
  // `after`, issued at 125, is not held back either: [155, 165).
  CHECK(result.start(after) == 155);
  CHECK(result.makespan == 25 + 100 + 4 * 10);
}

TEST_CASE("each host issues only its own stream, and a cost of zero turns the host off", "[engine][host]") {
  for (const TimeNs host : {TimeNs{0}, TimeNs{30}}) {
    UnitPlatform p(host);
    const DeviceId gpu0 = p.add_gpu("gpu0");
    const DeviceId gpu1 = p.add_gpu("gpu1");
    const OpId a = p.op("a", p.compute(gpu0), 10);
    const OpId b = p.op("b", p.compute(gpu0), 10);
    const OpId c = p.op("c", p.compute(gpu1), 50);
    const OpId d = p.op("d", p.compute(gpu1), 5);
    p.connect(a, d);
    const RooflineCostModel cost_model = p.cost_model();
    const Graph graph = p.build();
    const SimulationResult result = simulate(graph, cost_model);
    CHECK(result.start(a) == host);
    CHECK(result.start(b) == 2 * host + (host == 0 ? 10 : 0));
    CHECK(result.start(c) == host);
    // d waits for a and for c, which its host issued long before: [host + 50, host + 55).
    CHECK(result.start(d) == host + 50);
    CHECK(result.makespan == std::max(2 * host + 10 + (host == 0 ? 10 : 0), host + 55));
  }
}

TEST_CASE("the host holds back the members of a collective it has not issued", "[engine][host]") {
  UnitPlatform p(20);
  const DeviceId gpu0 = p.add_gpu("gpu0");
  const DeviceId gpu1 = p.add_gpu("gpu1");
  p.op("first", p.comm(gpu0), 5, OpClass::send);
  const OpId m0 = p.op("ar.0", p.comm(gpu0), 8, OpClass::allreduce);
  const OpId m1 = p.op("ar.1", p.comm(gpu1), 8, OpClass::allreduce);
  p.builder().add_collective("ar", std::vector<OpId>{m0, m1});
  const RooflineCostModel cost_model = p.cost_model();
  const Graph graph = p.build();
  const SimulationResult result = simulate(graph, cost_model);
  // gpu0's host issues ar.0 second, at 40; gpu1's issues ar.1 at 20: both start at 40.
  CHECK(result.start(m0) == 40);
  CHECK(result.start(m1) == 40);
  CHECK(result.makespan == 48);
}

// A layer template: three 10 ns kernels on the compute stream, and a 4 ns send on the comm stream
// of what the first computes.
std::shared_ptr<const Subgraph> make_layer(TimeNs host) {
  UnitPlatform t(host);
  const DeviceId gpu = t.add_gpu("gpu");
  const TensorId x = t.tensor("x", gpu, 8);
  const OpId first = t.op("a", t.compute(gpu), 10);
  t.builder().add_input(first, x);
  t.op("b", t.compute(gpu), 10);
  const OpId last = t.op("c", t.compute(gpu), 10);
  const TensorId y = t.tensor("y", gpu, 8);
  t.builder().add_output(last, y);
  t.connect(first, t.op("send", t.comm(gpu), 4, OpClass::send));
  return std::make_shared<const Subgraph>("layer", t.build(), std::vector<TensorId>{x}, std::vector<TensorId>{y});
}

TEST_CASE("layers stamped from templates keep the host's pace, as their ops simulated one by one do",
          "[engine][host][composite]") {
  // A 200 ns kernel, then four layers: the host (15 ns per op) is far ahead by the time the
  // layers run, except while it issues the first one.
  for (const TimeNs long_kernel : {TimeNs{0}, TimeNs{200}}) {
    UnitPlatform p(15);
    const DeviceId gpu = p.add_gpu("gpu");
    if (long_kernel > 0) p.op("long", p.compute(gpu), long_kernel);
    const SubgraphId layer = p.builder().add_subgraph(make_layer(15));
    std::vector<TensorId> x{p.tensor("x0", gpu, 8)};
    std::vector<OpId> layers;
    for (int l = 0; l < 4; ++l) {
      x.push_back(p.tensor("x", gpu, 8));
      layers.push_back(p.builder().add_composite("layer", layer, std::vector<StreamId>{p.compute(gpu), p.comm(gpu)},
                                                 std::vector<TensorId>{x[x.size() - 2]},
                                                 std::vector<TensorId>{x.back()}));
    }
    const RooflineCostModel cost_model = p.cost_model();
    const Graph graph = p.build();
    ScheduleCache cache;
    const SimulationResult reused = simulate_with(graph, cost_model, true, cache);
    ScheduleCache other;
    const SimulationResult expanded = simulate_with(graph, cost_model, false, other);
    CHECK(reused.reused_subgraphs);
    CHECK(reused.makespan == expanded.makespan);
    CHECK(all_op_times(graph, reused) == all_op_times(graph, expanded));
    if (long_kernel == 0) {
      // Host-bound throughout: the 12 compute kernels are issued at 15, 30, ..., 180 (the sends
      // have a host of their own and end early); the last ends at 190.
      CHECK(reused.makespan == 12 * 15 + 10);
    } else {
      // The long kernel runs [15, 215); the host has issued all 12 layer kernels by 195, so
      // they run back to back (the last send, after the last layer's first kernel, ends earlier).
      CHECK(reused.makespan == 15 + 200 + 12 * 10);
      CHECK(cache.stats().misses == 1);  // one schedule, for a host far enough ahead
    }
  }
}

TEST_CASE("a template's host-issued stream binds only to a host-issued stream", "[engine][host][composite]") {
  UnitPlatform p;
  const DeviceId gpu = p.add_gpu("gpu");
  const SubgraphId layer = p.builder().add_subgraph(make_layer(15));
  const TensorId x0 = p.tensor("x0", gpu, 8);
  const TensorId x1 = p.tensor("x1", gpu, 8);
  CHECK_THROWS_WITH(p.builder().add_composite("layer", layer, std::vector<StreamId>{p.compute(gpu), p.comm(gpu)},
                                              std::vector<TensorId>{x0}, std::vector<TensorId>{x1}),
                    Catch::Contains("host-issued"));
  CHECK_THROWS_AS(p.builder().add_stream(gpu, "transfer", StreamPolicy::first_ready, true), InputError);
}

TEST_CASE("with hosts issuing every stream, reusing templates still gives the expanded simulation's answer",
          "[engine][host][reuse]") {
  ScheduleCache cache;
  int held_back = 0;
  int reused_runs = 0;
  for (int seed = 0; seed < 1500; ++seed) {
    INFO("seed " << seed);
    const TimeNs host = 1 + seed % 30;
    const auto random = make_random_composite_graph(static_cast<std::uint64_t>(seed), seed % 3 == 0, host);
    const auto plain = make_random_composite_graph(static_cast<std::uint64_t>(seed), seed % 3 == 0);
    const SimulationResult reused = test::require_reuse_exact(random.graph, random.cost_model, cache);
    held_back += reused.makespan > simulate(plain.graph, plain.cost_model).makespan ? 1 : 0;
    reused_runs += reused.reused_subgraphs ? 1 : 0;
  }
  WARN("runs the host slowed: " << held_back << ", runs reused: " << reused_runs << " of 1500");
  CHECK(held_back > 500);
  CHECK(reused_runs > 200);
}

}  // namespace
}  // namespace weft
