// Composite ops against timelines worked out by hand on the unit platform (1 unit = 1 ns).
#include <catch2/catch.hpp>

#include "simulator/core/input_error.hpp"
#include "simulator/engine/engine.hpp"
#include "simulator/graph/subgraph.hpp"
#include "tests/support/simulation_comparison.hpp"
#include "tests/support/unit_platform.hpp"

namespace weft {
namespace {

using test::simulate_with;
using test::UnitPlatform;

// A layer: `matmul` (10 ns, compute) reads input x and writes h (100 B, internal) and y (8 B,
// output); `reduce` (4 ns, comm) reads h after it, and `finish` (3 ns, compute) runs after
// matmul. Ports: in x (8 B); out y.
std::shared_ptr<const Subgraph> make_layer() {
  UnitPlatform p;
  const DeviceId gpu = p.add_gpu("gpu");
  const TensorId x = p.tensor("x", gpu, 8);
  const OpId matmul = p.op("matmul", p.compute(gpu), 10);
  p.builder().add_input(matmul, x);
  const TensorId y = p.tensor("y", gpu, 8);
  p.builder().add_output(matmul, y);
  const OpId reduce = p.op("reduce", p.comm(gpu), 4, OpClass::send);
  p.connect(matmul, reduce, 100);
  p.op("finish", p.compute(gpu), 3);
  return std::make_shared<const Subgraph>("layer", p.build(), std::vector<TensorId>{x}, std::vector<TensorId>{y});
}

struct TwoLayers {
  Graph graph;
  RooflineCostModel cost_model;
};

// Two layers in a row on one GPU, the second reading the first's output.
TwoLayers two_layers() {
  UnitPlatform p;
  const DeviceId gpu = p.add_gpu("gpu");
  const SubgraphId layer = p.builder().add_subgraph(make_layer());
  const TensorId x0 = p.tensor("x0", gpu, 8);
  const TensorId x1 = p.tensor("x1", gpu, 8);
  const TensorId x2 = p.tensor("x2", gpu, 8);
  const std::vector<StreamId> streams{p.compute(gpu), p.comm(gpu)};
  p.builder().add_composite("layer0", layer, streams, std::vector<TensorId>{x0}, std::vector<TensorId>{x1});
  p.builder().add_composite("layer1", layer, streams, std::vector<TensorId>{x1}, std::vector<TensorId>{x2});
  RooflineCostModel cost_model = p.cost_model();
  return {p.build(), std::move(cost_model)};
}

TEST_CASE("a composite runs its template's ops and hands its output on", "[engine][composite]") {
  const TwoLayers layers = two_layers();
  ScheduleCache cache;
  const SimulationResult result = simulate_with(layers.graph, layers.cost_model, true, cache);
  REQUIRE(result.reused_subgraphs);
  // layer0: matmul [0,10), reduce [10,14) on comm, finish [10,13). The span ends at 14.
  // layer1 waits for x1 (10) and for the compute stream (13): matmul [13,23), reduce [23,27),
  // finish [23,26).
  CHECK(result.start(OpId(0)) == 0);
  CHECK(result.end(OpId(0)) == 14);
  CHECK(result.start(OpId(1)) == 13);
  CHECK(result.end(OpId(1)) == 27);
  CHECK(result.makespan == 27);
  const TemplateSchedule& second = *result.composite_schedules[1];
  CHECK(second.op_start == std::vector<TimeNs>{0, 10, 10});
  CHECK(second.op_end == std::vector<TimeNs>{10, 14, 13});
  // Busy: [0,14) and [13,27) overlap into [0,27).
  CHECK(result.devices[0].busy_ns == 27);
  CHECK(result.devices[0].busy_by_category[static_cast<std::size_t>(OpCategory::compute)] == 26);
  CHECK(result.devices[0].busy_by_category[static_cast<std::size_t>(OpCategory::communication)] == 8);
  // Memory: x0 exists from the start; an output is allocated when its producer starts and the
  // internal h (100 B) lives from matmul's start to reduce's end.
  //   t=0   x0 8 + x1 8 + h 100               = 116
  //   t=10  x0 freed (layer0's matmul ends)    = 108
  //   t=13  layer1's h 100 + x2 8              = 216
  //   t=14  layer0's h freed                   = 116
  //   t=23  x1 freed (layer1's matmul ends)    = 108
  //   t=27  layer1's h freed                   = 8 (nothing reads x2: it lives on)
  CHECK(result.devices[0].peak_memory == 216);
  CHECK(result.devices[0].peak_memory_time == 13);
  std::vector<std::pair<TimeNs, Bytes>> timeline;
  for (const MemoryPoint& point : result.devices[0].memory_timeline) timeline.emplace_back(point.time, point.bytes);
  CHECK(timeline ==
        std::vector<std::pair<TimeNs, Bytes>>{{0, 116}, {10, 108}, {13, 216}, {14, 116}, {23, 108}, {27, 8}});
  // The template was simulated once for both layers: the second found the first's schedule (its
  // comm stream frees at 14, 1 ns after its start, before its reduce could start anyway).
  CHECK(cache.stats().misses == 1);
  CHECK(cache.stats().hits == 1);
  // Where the engine's time on templates went: two lookups (one per composite), the first of
  // which searched the cache and simulated the template.
  CHECK(cache.stats().lookups == 2);
  CHECK(cache.stats().lookup_s > 0.0);
  CHECK(cache.stats().simulation_s > 0.0);
}

TEST_CASE("without reuse the expanded graph gives the same times", "[engine][composite]") {
  const TwoLayers layers = two_layers();
  ScheduleCache cache;
  const SimulationResult result = simulate_with(layers.graph, layers.cost_model, false, cache);
  CHECK_FALSE(result.reused_subgraphs);
  CHECK(result.start(OpId(1)) == 13);
  CHECK(result.end(OpId(1)) == 27);
  CHECK(result.devices[0].peak_memory == 216);
  CHECK(cache.stats().misses == 0);
}

TEST_CASE("a composite whose first op could start before its last input falls back to the full simulation",
          "[engine][composite]") {
  // A template whose comm stream starts with an op reading input `early` while the compute
  // stream's op reads `late`: stamping at the time `late` arrives would start the comm op too
  // late.
  UnitPlatform t;
  const DeviceId inner = t.add_gpu("gpu");
  const TensorId early_port = t.tensor("early", inner, 0);
  const TensorId late_port = t.tensor("late", inner, 0);
  const OpId send = t.op("send", t.comm(inner), 5, OpClass::send);
  t.builder().add_input(send, early_port);
  const OpId work = t.op("work", t.compute(inner), 5);
  t.builder().add_input(work, late_port);
  auto subgraph = std::make_shared<const Subgraph>("split", t.build(), std::vector<TensorId>{early_port, late_port},
                                                   std::vector<TensorId>{});
  UnitPlatform p;
  const DeviceId gpu = p.add_gpu("gpu");
  const OpId first = p.op("first", p.compute(gpu), 1);
  const OpId second = p.op("second", p.compute(gpu), 7);
  const TensorId early = p.tensor("e", gpu, 0);
  const TensorId late = p.tensor("l", gpu, 0);
  p.builder().add_output(first, early);
  p.builder().add_output(second, late);
  const OpId composite = p.builder().add_composite("c", p.builder().add_subgraph(subgraph),
                                                   std::vector<StreamId>{p.compute(gpu), p.comm(gpu)},
                                                   std::vector<TensorId>{early, late}, std::vector<TensorId>{});
  const RooflineCostModel cost_model = p.cost_model();
  const Graph graph = p.build();
  ScheduleCache cache;
  const SimulationResult result = simulate_with(graph, cost_model, true, cache);
  CHECK_FALSE(result.reused_subgraphs);
  CHECK(cache.stats().fallbacks == 1);
  // send runs at [1,6) as soon as `early` exists; work at [8,13).
  CHECK(result.start(composite) == 1);
  CHECK(result.end(composite) == 13);
  CHECK(result.composite_schedules[0]->op_start == std::vector<TimeNs>{0, 7});
}

TEST_CASE("a composite waits for a secondary stream that frees late", "[engine][composite]") {
  // A long op on the comm stream before the layer delays the layer's reduce, not its matmul.
  UnitPlatform p;
  const DeviceId gpu = p.add_gpu("gpu");
  p.op("long send", p.comm(gpu), 30, OpClass::send);
  const SubgraphId layer = p.builder().add_subgraph(make_layer());
  const TensorId x0 = p.tensor("x0", gpu, 8);
  const TensorId x1 = p.tensor("x1", gpu, 8);
  p.builder().add_composite("layer", layer, std::vector<StreamId>{p.compute(gpu), p.comm(gpu)},
                            std::vector<TensorId>{x0}, std::vector<TensorId>{x1});
  const RooflineCostModel cost_model = p.cost_model();
  const Graph graph = p.build();
  for (bool reuse : {true, false}) {
    ScheduleCache cache;
    const SimulationResult result = simulate_with(graph, cost_model, reuse, cache);
    CHECK(result.reused_subgraphs == reuse);
    // matmul [0,10), finish [10,13), reduce [30,34).
    CHECK(result.start(OpId(1)) == 0);
    CHECK(result.end(OpId(1)) == 34);
    CHECK(result.composite_schedules[0]->op_start[1] - result.composite_schedules[0]->earliest_start == 30);
  }
}

TEST_CASE("templates and composites reject what they cannot stand for", "[engine][composite]") {
  UnitPlatform t;
  const DeviceId gpu = t.add_gpu("gpu");
  const TensorId x = t.tensor("x", gpu, 8);
  const OpId op = t.op("op", t.compute(gpu), 1);
  t.builder().add_input(op, x);
  const TensorId dangling = t.tensor("dangling", gpu, 8);
  t.builder().add_output(op, dangling);
  Graph graph = t.build();
  SECTION("a tensor made inside must be read inside or be an output") {
    REQUIRE_THROWS_WITH(Subgraph("s", std::move(graph), {x}, {}),
                        Catch::Contains("tensor 'dangling' is neither a port nor produced and consumed inside"));
  }
  SECTION("every stream must have ops") {
    // The comm stream is empty.
    REQUIRE_THROWS_WITH(Subgraph("s", std::move(graph), {x}, {dangling}), Catch::Contains("stream 'comm' has no ops"));
  }
  SECTION("a composite binds as many streams, inputs and outputs as its template has") {
    UnitPlatform p;
    const DeviceId outer = p.add_gpu("gpu");
    const SubgraphId layer = p.builder().add_subgraph(make_layer());
    const TensorId in = p.tensor("in", outer, 8);
    const TensorId wrong = p.tensor("wrong", outer, 9);
    REQUIRE_THROWS_WITH(p.builder().add_composite("c", layer, std::vector<StreamId>{p.compute(outer)},
                                                  std::vector<TensorId>{in}, std::vector<TensorId>{in}),
                        Catch::Contains("binds 1 streams, the template has 2"));
    REQUIRE_THROWS_WITH(p.builder().add_composite("c", layer, std::vector<StreamId>{p.compute(outer), p.comm(outer)},
                                                  std::vector<TensorId>{in}, std::vector<TensorId>{wrong}),
                        Catch::Contains("output tensor 'wrong' has 9 bytes, the template's port 8"));
    REQUIRE_THROWS_WITH(p.builder().add_composite("c", layer, std::vector<StreamId>{p.compute(outer), p.compute(outer)},
                                                  std::vector<TensorId>{in}, std::vector<TensorId>{wrong}),
                        Catch::Contains("binds two template streams to one stream"));
  }
}

}  // namespace
}  // namespace weft
