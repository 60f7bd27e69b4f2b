// The device's gap between kernels queued back to back on a host-issued stream, against timelines
// worked out by hand on the unit platform (1 unit = 1 ns): an op starts no earlier than the gap
// after the op before it on its stream ends; what other streams wait for is the kernel's end.
#include <catch2/catch.hpp>

#include "simulator/engine/engine.hpp"
#include "tests/support/random_composite_graph.hpp"
#include "tests/support/simulation_comparison.hpp"
#include "tests/support/unit_platform.hpp"

namespace weft {
namespace {

using test::make_random_composite_graph;
using test::UnitPlatform;

TEST_CASE("kernels queued back to back start a gap apart", "[engine][kernel_gap]") {
  UnitPlatform p(0, 3);
  const DeviceId gpu = p.add_gpu("gpu");
  std::vector<OpId> ops;
  for (int k = 0; k < 4; ++k) ops.push_back(p.op("kernel", p.compute(gpu), 10));
  const RooflineCostModel cost_model = p.cost_model();
  const Graph graph = p.build();
  const SimulationResult result = simulate(graph, cost_model);
  // [0, 10), [13, 23), [26, 36), [39, 49): each waited for the one before it, then the gap.
  for (std::size_t k = 0; k < ops.size(); ++k) {
    CHECK(result.start(ops[k]) == 13 * static_cast<TimeNs>(k));
    CHECK(result.end(ops[k]) == 13 * static_cast<TimeNs>(k) + 10);
    if (k > 0) CHECK(result.op_binding[ops[k].value()] == ops[k - 1]);
  }
  CHECK(result.makespan == 4 * 10 + 3 * 3);
  // The device's front end is busy through each gap, launching the next kernel; the last gap ends
  // with the iteration.
  CHECK(result.devices[gpu.value()].busy_ns == result.makespan);
  CHECK(result.devices[gpu.value()].busy_by_category[static_cast<std::size_t>(OpCategory::compute)] == 40);
}

TEST_CASE("the gap follows the kernel on its own stream only", "[engine][kernel_gap]") {
  UnitPlatform p(0, 5);
  const DeviceId gpu = p.add_gpu("gpu");
  const OpId produce = p.op("produce", p.compute(gpu), 10);
  const OpId send = p.op("send", p.comm(gpu), 20, OpClass::send);
  const OpId next = p.op("next", p.compute(gpu), 10);
  p.connect(produce, send);
  const RooflineCostModel cost_model = p.cost_model();
  const Graph graph = p.build();
  const SimulationResult result = simulate(graph, cost_model);
  CHECK(result.start(send) == 10);  // the data was there when `produce` ended
  CHECK(result.start(next) == 15);  // its stream's kernel ended at 10, the gap is 5
  CHECK(result.makespan == 30);
}

TEST_CASE("a host ahead of the device leaves the gaps, one behind it hides them", "[engine][kernel_gap][host]") {
  UnitPlatform p(25, 3);  // every op a GEMM, issued 25 ns after the one before
  const DeviceId gpu = p.add_gpu("gpu");
  const OpId gemm = p.op("gemm", p.compute(gpu), 100);
  std::vector<OpId> small;
  for (int k = 0; k < 3; ++k) small.push_back(p.op("small", p.compute(gpu), 10));
  std::vector<OpId> tiny;
  for (int k = 0; k < 4; ++k) tiny.push_back(p.op("tiny", p.compute(gpu), 1));
  const RooflineCostModel cost_model = p.cost_model();
  const Graph graph = p.build();
  const SimulationResult result = simulate(graph, cost_model);
  // gemm, issued at 25: [25, 125). The small ones, issued at 50, 75 and 100, wait for the device:
  // [128, 138), [141, 151), [154, 164). The tiny ones are issued at 125, 150, 175 and 200: the
  // first two wait for the device (167, 171), the third for both (175 = 172 + 3), the last for
  // its host only (200 > 176 + 3).
  CHECK(result.start(gemm) == 25);
  CHECK(result.start(small[0]) == 128);
  CHECK(result.start(small[1]) == 141);
  CHECK(result.start(small[2]) == 154);
  CHECK(result.op_binding[small[2].value()] == small[1]);
  CHECK(result.start(tiny[0]) == 167);
  CHECK(result.start(tiny[1]) == 171);
  CHECK(result.start(tiny[2]) == 175);
  CHECK(result.start(tiny[3]) == 200);
  CHECK(result.op_binding[tiny[3].value()] == OpId::none());  // the host
  CHECK(result.makespan == 201);
  // Busy from 25 through the gap after the third tiny kernel (179), then while the last ran.
  CHECK(result.devices[gpu.value()].busy_ns == (179 - 25) + 1);
}

TEST_CASE("with kernel gaps on every GPU stream, reusing templates still gives the expanded simulation's answer",
          "[engine][kernel_gap][reuse]") {
  ScheduleCache cache;
  int slowed = 0;
  int reused_runs = 0;
  for (int seed = 0; seed < 1000; ++seed) {
    INFO("seed " << seed);
    const TimeNs host = seed % 2 == 0 ? 0 : 1 + seed % 30;
    const TimeNs gap = 1 + seed % 7;
    const auto random = make_random_composite_graph(static_cast<std::uint64_t>(seed), seed % 3 == 0, host, gap);
    const auto gapless = make_random_composite_graph(static_cast<std::uint64_t>(seed), seed % 3 == 0, host);
    const SimulationResult reused = test::require_reuse_exact(random.graph, random.cost_model, cache);
    slowed += reused.makespan > simulate(gapless.graph, gapless.cost_model).makespan ? 1 : 0;
    reused_runs += reused.reused_subgraphs ? 1 : 0;
  }
  WARN("runs the gaps slowed: " << slowed << ", runs reused: " << reused_runs << " of 1000");
  CHECK(slowed > 300);
  CHECK(reused_runs > 100);
}

}  // namespace
}  // namespace weft
