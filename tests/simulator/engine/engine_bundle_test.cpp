// Bundles: several tensors one composite hands to another as one port, against timelines worked
// out by hand on the unit platform (1 unit = 1 ns), and the rules they must keep.
#include <catch2/catch.hpp>

#include "simulator/core/input_error.hpp"
#include "simulator/engine/engine.hpp"
#include "simulator/graph/subgraph.hpp"
#include "tests/support/unit_platform.hpp"

namespace weft {
namespace {

using test::UnitPlatform;

// A forward pass: f1 [0,10) saves a (100 B), f2 [10,20) saves b (50 B); both leave in one bundle.
// A 1 ns op on the comm stream follows f2.
std::shared_ptr<const Subgraph> make_forward(Bytes a_bytes = 100, Bytes b_bytes = 50) {
  UnitPlatform p;
  const DeviceId gpu = p.add_gpu("gpu");
  const OpId f1 = p.op("f1", p.compute(gpu), 10);
  const OpId f2 = p.op("f2", p.compute(gpu), 10);
  p.builder().add_control_edge(f2, p.op("notify", p.comm(gpu), 1, OpClass::send));
  const TensorId a = p.tensor("a", gpu, a_bytes);
  const TensorId b = p.tensor("b", gpu, b_bytes);
  p.builder().add_output(f1, a);
  p.builder().add_output(f2, b);
  const TensorId saved = p.tensor("saved", gpu, a_bytes + b_bytes, TensorKind::bundle);
  return std::make_shared<const Subgraph>("forward", p.build(), std::vector<TensorId>{}, std::vector<TensorId>{saved},
                                          std::vector<Subgraph::Signal>{},
                                          std::vector<Subgraph::Bundle>{{saved, {a, b}}});
}

// A backward pass: g1 [0,5) reads b, g2 [5,10) reads a; a 1 ns op on the comm stream follows g2.
std::shared_ptr<const Subgraph> make_backward() {
  UnitPlatform p;
  const DeviceId gpu = p.add_gpu("gpu");
  const TensorId a = p.tensor("a", gpu, 100);
  const TensorId b = p.tensor("b", gpu, 50);
  const OpId g1 = p.op("g1", p.compute(gpu), 5);
  const OpId g2 = p.op("g2", p.compute(gpu), 5);
  p.builder().add_control_edge(g2, p.op("notify", p.comm(gpu), 1, OpClass::send));
  p.builder().add_input(g1, b);
  p.builder().add_input(g2, a);
  const TensorId saved = p.tensor("saved", gpu, 150, TensorKind::bundle);
  return std::make_shared<const Subgraph>("backward", p.build(), std::vector<TensorId>{saved}, std::vector<TensorId>{},
                                          std::vector<Subgraph::Signal>{},
                                          std::vector<Subgraph::Bundle>{{saved, {a, b}}});
}

struct Pair {
  UnitPlatform p;
  DeviceId gpu;
  SubgraphId forward;
  SubgraphId backward;
  std::vector<StreamId> streams;
  Pair(std::shared_ptr<const Subgraph> forward_template = make_forward()) {
    gpu = p.add_gpu("gpu");
    forward = p.builder().add_subgraph(std::move(forward_template));
    backward = p.builder().add_subgraph(make_backward());
    streams = {p.compute(gpu), p.comm(gpu)};
  }
  OpId forward_op(TensorId bundle) {
    return p.builder().add_composite("fwd", forward, streams, std::vector<TensorId>{}, std::vector<TensorId>{bundle});
  }
  OpId backward_op(TensorId bundle) {
    return p.builder().add_composite("bwd", backward, streams, std::vector<TensorId>{bundle}, std::vector<TensorId>{});
  }
};

TEST_CASE("a bundle's members live from their producers' starts to their last readers' ends", "[engine][bundle]") {
  // fwd [0,21); a 30 ns op [20,50); bwd [50,61): b (50 B) dies at 55, a (100 B) at 60.
  Pair pair;
  const TensorId saved = pair.p.tensor("saved", pair.gpu, 150, TensorKind::bundle);
  pair.forward_op(saved);
  pair.p.op("other", pair.p.compute(pair.gpu), 30);
  const OpId backward = pair.backward_op(saved);
  const Graph graph = pair.p.build();
  for (const bool reuse : {true, false}) {
    INFO("reuse " << reuse);
    ScheduleCache cache;
    SimulationOptions options;
    options.record_memory_timeline = true;
    options.reuse = reuse;
    options.cache = &cache;
    const SimulationResult result = simulate(graph, pair.p.cost_model(), options);
    CHECK(result.reused_subgraphs == reuse);
    CHECK(result.start(backward) == 50);
    CHECK(result.makespan == 61);
    const DeviceResult& device = result.devices[pair.gpu.value()];
    CHECK(device.peak_memory == 150);
    CHECK(device.peak_memory_time == 10);
    const std::vector<std::pair<TimeNs, Bytes>> expected{{0, 100}, {10, 150}, {55, 100}, {60, 0}};
    REQUIRE(device.memory_timeline.size() == expected.size());
    for (std::size_t i = 0; i < expected.size(); ++i) {
      CHECK(device.memory_timeline[i].time == expected[i].first);
      CHECK(device.memory_timeline[i].bytes == expected[i].second);
    }
  }
}

TEST_CASE("bundles go from one composite to at most one other, with the same members", "[engine][bundle]") {
  SECTION("a primitive op cannot write a bundle") {
    Pair pair;
    const TensorId saved = pair.p.tensor("saved", pair.gpu, 150, TensorKind::bundle);
    const OpId op = pair.p.op("op", pair.p.compute(pair.gpu), 1);
    REQUIRE_THROWS_WITH(pair.p.builder().add_output(op, saved),
                        Catch::Contains("op 'op' is not a composite and cannot read or write bundle 'saved'"));
  }
  SECTION("two composites cannot read one bundle") {
    Pair pair;
    const TensorId saved = pair.p.tensor("saved", pair.gpu, 150, TensorKind::bundle);
    pair.forward_op(saved);
    pair.backward_op(saved);
    pair.backward_op(saved);
    REQUIRE_THROWS_WITH(pair.p.build(), Catch::Contains("bundle 'saved' is read by more than one composite"));
  }
  SECTION("the reader's members must be the producer's, one by one") {
    Pair pair(make_forward(50, 100));  // 150 B in all, as the backward reads, but in another order
    const TensorId saved = pair.p.tensor("saved", pair.gpu, 150, TensorKind::bundle);
    pair.forward_op(saved);
    pair.backward_op(saved);
    REQUIRE_THROWS_WITH(pair.p.build(),
                        Catch::Contains("bundle 'saved': the members 'fwd' produces differ from those 'bwd' reads"));
  }
  SECTION("a bundle port binds a bundle, and only a bundle") {
    Pair pair;
    const TensorId plain = pair.p.tensor("plain", pair.gpu, 150);
    REQUIRE_THROWS_WITH(pair.forward_op(plain), Catch::Contains("must both be bundles or neither"));
  }
  SECTION("an input bundle's members must come from outside") {
    UnitPlatform p;
    const DeviceId gpu = p.add_gpu("gpu");
    const OpId f = p.op("f", p.compute(gpu), 1);
    const OpId g = p.op("g", p.comm(gpu), 1, OpClass::send);
    const TensorId a = p.tensor("a", gpu, 10);
    p.builder().add_output(f, a);
    p.builder().add_input(g, a);
    const TensorId saved = p.tensor("saved", gpu, 10, TensorKind::bundle);
    REQUIRE_THROWS_WITH(Subgraph("s", p.build(), {saved}, {}, {}, {{saved, {a}}}),
                        Catch::Contains("bundle 'saved' brings a member produced inside"));
  }
}

}  // namespace
}  // namespace weft
