#include <catch2/catch.hpp>

#include <utility>
#include <vector>

#include "simulator/engine/engine.hpp"
#include "tests/support/unit_platform.hpp"

namespace weft {
namespace {

using test::UnitPlatform;

// gpu0 runs A [0,100) -> B [100,200) -> C [200,300). A produces t1 (1,000 B) for B; B produces
// t2 (500 B) for C; C produces t3 (200 B) that nobody reads; a 10,000 B parameter lives all run.
struct ThreeOpGraph {
  explicit ThreeOpGraph(Bytes capacity) {
    gpu = p.add_gpu("gpu0", capacity);
    a = p.op("A", p.compute(gpu), 100);
    b = p.op("B", p.compute(gpu), 100);
    c = p.op("C", p.compute(gpu), 100);
    p.connect(a, b, 1000);
    p.connect(b, c, 500);
    const TensorId t3 = p.tensor("t3", gpu, 200);
    p.builder().add_output(c, t3);
    const TensorId weights = p.tensor("weights", gpu, 10'000, TensorKind::parameter);
    p.builder().add_input(a, weights);
    p.builder().add_input(c, weights);
  }
  UnitPlatform p;
  DeviceId gpu;
  OpId a, b, c;
};

TEST_CASE("overlapping tensor lifetimes set the peak", "[engine][memory]") {
  ThreeOpGraph g(0);
  const Graph graph = g.p.build();
  SimulationOptions options;
  options.record_memory_timeline = true;
  const SimulationResult result = simulate(graph, g.p.cost_model(), options);
  const DeviceResult& device = result.devices[g.gpu.value()];

  // t1 lives [0,200), t2 [100,300), t3 [200,end], weights all run.
  //   [0,100):   weights + t1           = 11,000
  //   [100,200): weights + t1 + t2      = 11,500
  //   [200,300): weights + t2 + t3      = 10,700  (t1 freed at 200 before t3 is counted)
  //   300:       weights + t3           = 10,200  (t2 freed; t3 has no consumer and stays)
  CHECK(device.peak_memory == 11'500);
  CHECK(device.peak_memory_time == 100);
  REQUIRE(device.memory_timeline.size() == 4);
  CHECK(device.memory_timeline[0].time == 0);
  CHECK(device.memory_timeline[0].bytes == 11'000);
  CHECK(device.memory_timeline[1].time == 100);
  CHECK(device.memory_timeline[1].bytes == 11'500);
  CHECK(device.memory_timeline[2].time == 200);
  CHECK(device.memory_timeline[2].bytes == 10'700);
  CHECK(device.memory_timeline[3].time == 300);
  CHECK(device.memory_timeline[3].bytes == 10'200);
  CHECK_FALSE(device.oom);
}

TEST_CASE("a peak above the device's capacity is out of memory", "[engine][memory]") {
  SECTION("one byte short") {
    ThreeOpGraph g(11'499);
    const Graph graph = g.p.build();
    const SimulationResult result = simulate(graph, g.p.cost_model());
    CHECK(result.devices[g.gpu.value()].oom);
    CHECK(result.devices[g.gpu.value()].memory_capacity == 11'499);
  }
  SECTION("exactly enough") {
    ThreeOpGraph g(11'500);
    const Graph graph = g.p.build();
    const SimulationResult result = simulate(graph, g.p.cost_model());
    CHECK_FALSE(result.devices[g.gpu.value()].oom);
  }
}

TEST_CASE("the memory timeline is only recorded on request but the peak always", "[engine][memory]") {
  ThreeOpGraph g(0);
  const Graph graph = g.p.build();
  const SimulationResult result = simulate(graph, g.p.cost_model());
  CHECK(result.devices[g.gpu.value()].memory_timeline.empty());
  CHECK(result.devices[g.gpu.value()].peak_memory == 11'500);
}

TEST_CASE("a tensor lives on its own device even when ops elsewhere use it", "[engine][memory]") {
  UnitPlatform p;
  const DeviceId gpu0 = p.add_gpu("gpu0");
  const DeviceId gpu1 = p.add_gpu("gpu1");
  const OpId produce = p.op("produce", p.compute(gpu0), 10);
  const OpId consume = p.op("consume", p.compute(gpu1), 10);
  p.connect(produce, consume, 4096);
  const Graph graph = p.build();
  const SimulationResult result = simulate(graph, p.cost_model());
  CHECK(result.devices[gpu0.value()].peak_memory == 4096);
  CHECK(result.devices[gpu1.value()].peak_memory == 0);
}

TEST_CASE("a workspace lives while its producer runs", "[engine][memory]") {
  // A [0,100) holds a 3,000 B workspace and passes t1 (1,000 B) to B [100,200), which holds a
  // 2,000 B workspace. Hand count:
  //   [0,100):   t1 + A's workspace       = 4,000
  //   [100,200): t1 + B's workspace       = 3,000  (A's workspace freed when A ends)
  //   200:       nothing                  = 0
  UnitPlatform p;
  const DeviceId gpu = p.add_gpu("gpu0");
  const OpId a = p.op("A", p.compute(gpu), 100);
  const OpId b = p.op("B", p.compute(gpu), 100);
  p.connect(a, b, 1000);
  p.builder().add_output(a, p.tensor("scratch A", gpu, 3000, TensorKind::workspace));
  p.builder().add_output(b, p.tensor("scratch B", gpu, 2000, TensorKind::workspace));
  const Graph graph = p.build();
  CHECK(graph.has_workspaces());
  SimulationOptions options;
  options.record_memory_timeline = true;
  const DeviceResult device = simulate(graph, p.cost_model(), options).devices[gpu.value()];
  CHECK(device.peak_memory == 4000);
  std::vector<std::pair<TimeNs, Bytes>> timeline;
  for (const MemoryPoint& point : device.memory_timeline) timeline.emplace_back(point.time, point.bytes);
  CHECK(timeline == std::vector<std::pair<TimeNs, Bytes>>{{0, 4000}, {100, 3000}, {200, 0}});
}

TEST_CASE("a workspace needs a producer and no readers", "[engine][memory][errors]") {
  UnitPlatform p;
  const DeviceId gpu = p.add_gpu("gpu0");
  const OpId a = p.op("A", p.compute(gpu), 100);
  const OpId b = p.op("B", p.compute(gpu), 100);
  SECTION("read by another op") {
    const TensorId scratch = p.tensor("scratch", gpu, 10, TensorKind::workspace);
    p.builder().add_output(a, scratch);
    p.builder().add_input(b, scratch);
    CHECK_THROWS_WITH(p.build(), Catch::Contains("workspace tensor 'scratch' is read by op 'B'"));
  }
  SECTION("made by no op") {
    p.builder().add_input(b, p.tensor("scratch", gpu, 10, TensorKind::workspace));
    CHECK_THROWS_WITH(p.build(), Catch::Contains("workspace tensor 'scratch' has no producer"));
  }
}

}  // namespace
}  // namespace weft
