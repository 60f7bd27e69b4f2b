#include "simulator/engine/engine.hpp"

#include <catch2/catch.hpp>

#include "tests/support/unit_platform.hpp"

namespace weft {
namespace {

using test::UnitPlatform;

TEST_CASE("a chain across devices runs back to back", "[engine]") {
  UnitPlatform p;
  const DeviceId gpu0 = p.add_gpu("gpu0");
  const DeviceId gpu1 = p.add_gpu("gpu1");
  const OpId a = p.op("a", p.compute(gpu0), 100);
  const OpId b = p.op("b", p.compute(gpu1), 50);
  const OpId c = p.op("c", p.compute(gpu0), 25);
  p.connect(a, b);
  p.connect(b, c);
  const Graph graph = p.build();
  const SimulationResult result = simulate(graph, p.cost_model());

  CHECK(result.start(a) == 0);
  CHECK(result.end(a) == 100);
  CHECK(result.start(b) == 100);
  CHECK(result.end(b) == 150);
  CHECK(result.start(c) == 150);
  CHECK(result.end(c) == 175);
  CHECK(result.makespan == 175);
  CHECK(result.critical_path == std::vector<OpId>{a, b, c});
  CHECK(result.devices[gpu0.value()].busy_ns == 125);
  CHECK(result.devices[gpu1.value()].busy_ns == 50);
}

TEST_CASE("ops on different streams of a device overlap and busy time is their union", "[engine]") {
  UnitPlatform p;
  const DeviceId gpu = p.add_gpu("gpu0");
  const OpId compute = p.op("compute", p.compute(gpu), 100);
  const OpId comm = p.op("comm", p.comm(gpu), 60, OpClass::allreduce);
  const OpId later = p.op("later", p.comm(gpu), 70, OpClass::allreduce);
  const Graph graph = p.build();
  const SimulationResult result = simulate(graph, p.cost_model());

  CHECK(result.start(compute) == 0);
  CHECK(result.start(comm) == 0);
  CHECK(result.start(later) == 60);  // issue order on the comm stream
  CHECK(result.makespan == 130);
  const DeviceResult& device = result.devices[gpu.value()];
  CHECK(device.busy_ns == 130);  // [0,100) and [0,130) overlap
  CHECK(device.busy_by_category[static_cast<std::size_t>(OpCategory::compute)] == 100);
  CHECK(device.busy_by_category[static_cast<std::size_t>(OpCategory::communication)] == 130);
}

TEST_CASE("an in_order stream blocks behind an op waiting for a dependency", "[engine]") {
  UnitPlatform p;
  const DeviceId gpu0 = p.add_gpu("gpu0");
  const DeviceId gpu1 = p.add_gpu("gpu1");
  const OpId slow = p.op("slow", p.compute(gpu1), 100);
  const OpId waits = p.op("waits", p.compute(gpu0), 10);
  const OpId independent = p.op("independent", p.compute(gpu0), 5);
  p.connect(slow, waits);
  const Graph graph = p.build();
  const SimulationResult result = simulate(graph, p.cost_model());

  CHECK(result.start(waits) == 100);
  CHECK(result.start(independent) == 110);  // CUDA semantics: no overtaking within a stream
  CHECK(result.op_binding[independent.value()] == waits);
  CHECK(result.critical_path == std::vector<OpId>{slow, waits, independent});
  CHECK(result.devices[gpu0.value()].busy_ns == 15);
}

TEST_CASE("a collective starts when its slowest participant is ready and ends together", "[engine]") {
  UnitPlatform p;
  const DeviceId gpu0 = p.add_gpu("gpu0");
  const DeviceId gpu1 = p.add_gpu("gpu1");
  const OpId fast = p.op("fast", p.compute(gpu0), 100);
  const OpId slow = p.op("slow", p.compute(gpu1), 300);
  const OpId member0 = p.op("ar.0", p.comm(gpu0), 50, OpClass::allreduce);
  const OpId member1 = p.op("ar.1", p.comm(gpu1), 80, OpClass::allreduce);
  p.builder().add_control_edge(fast, member0);
  p.builder().add_control_edge(slow, member1);
  const std::vector<OpId> members{member0, member1};
  p.builder().add_collective("ar", members);
  const OpId after = p.op("after", p.compute(gpu0), 10);
  p.builder().add_control_edge(member0, after);
  const Graph graph = p.build();
  const SimulationResult result = simulate(graph, p.cost_model());

  CHECK(result.start(member0) == 300);
  CHECK(result.start(member1) == 300);
  CHECK(result.end(member0) == 380);  // the longer member's time
  CHECK(result.end(member1) == 380);
  CHECK(result.start(after) == 380);
  CHECK(result.makespan == 390);
  CHECK(result.critical_path == std::vector<OpId>{slow, member0, after});
}

TEST_CASE("a first_ready link serves ops in order of readiness, ties by op id", "[engine]") {
  UnitPlatform p;
  const DeviceId gpu = p.add_gpu("gpu0");
  const DeviceId link = p.add_link("link");
  const StreamId wire = p.comm(link);
  const OpId early = p.op("early", p.compute(gpu), 20);
  const OpId late = p.op("late", p.compute(gpu), 30);  // ends at 50
  const OpId send_late = p.op("send_late", wire, 100, OpClass::send);
  const OpId send_b = p.op("send_b", wire, 100, OpClass::send);
  const OpId send_a = p.op("send_a", wire, 100, OpClass::send);
  p.builder().add_control_edge(late, send_late);
  p.builder().add_control_edge(early, send_a);
  p.builder().add_control_edge(early, send_b);
  const Graph graph = p.build();
  const SimulationResult result = simulate(graph, p.cost_model());

  // send_b and send_a are both ready at 20: the lower id (send_b) goes first. send_late is
  // ready at 50, after both were queued, but before send_a started: it waits for its turn.
  CHECK(result.start(send_b) == 20);
  CHECK(result.start(send_a) == 120);
  CHECK(result.start(send_late) == 220);
  CHECK(result.op_binding[send_a.value()] == send_b);
  CHECK(result.op_binding[send_late.value()] == send_a);
  CHECK(result.makespan == 320);
  CHECK(result.devices[link.value()].busy_ns == 300);
}

TEST_CASE("a first_ready link starts an op at once when it is idle", "[engine]") {
  UnitPlatform p;
  const DeviceId gpu = p.add_gpu("gpu0");
  const DeviceId link = p.add_link("link");
  const OpId producer = p.op("producer", p.compute(gpu), 40);
  const OpId send = p.op("send", p.comm(link), 10, OpClass::send);
  const OpId free_send = p.op("free_send", p.comm(link), 5, OpClass::send);
  p.builder().add_control_edge(producer, send);
  const Graph graph = p.build();
  const SimulationResult result = simulate(graph, p.cost_model());
  CHECK(result.start(free_send) == 0);  // nothing else wanted the link at 0
  CHECK(result.start(send) == 40);
  CHECK(result.op_binding[send.value()] == producer);
}

TEST_CASE("zero-duration ops take no time and keep order", "[engine]") {
  UnitPlatform p;
  const DeviceId gpu = p.add_gpu("gpu0");
  const OpId a = p.op("a", p.compute(gpu), 0);
  const OpId b = p.op("b", p.compute(gpu), 0);
  const OpId c = p.op("c", p.compute(gpu), 7);
  const Graph graph = p.build();
  const SimulationResult result = simulate(graph, p.cost_model());
  CHECK(result.end(a) == 0);
  CHECK(result.end(b) == 0);
  CHECK(result.start(c) == 0);
  CHECK(result.makespan == 7);
}

TEST_CASE("an empty graph has zero makespan", "[engine]") {
  UnitPlatform p;
  p.add_gpu("gpu0");
  const Graph graph = p.build();
  const SimulationResult result = simulate(graph, p.cost_model());
  CHECK(result.makespan == 0);
  CHECK(result.critical_path.empty());
}

TEST_CASE("among dependencies ending together the binding is the highest id", "[engine]") {
  UnitPlatform p;
  const DeviceId gpu0 = p.add_gpu("gpu0");
  const DeviceId gpu1 = p.add_gpu("gpu1");
  const DeviceId gpu2 = p.add_gpu("gpu2");
  const OpId low = p.op("low", p.compute(gpu0), 50);
  const OpId high = p.op("high", p.compute(gpu1), 50);
  const OpId earlier = p.op("earlier", p.compute(gpu2), 10);
  const OpId join = p.op("join", p.comm(gpu2), 5, OpClass::send);
  p.builder().add_control_edge(high, join);
  p.builder().add_control_edge(earlier, join);
  p.builder().add_control_edge(low, join);
  const Graph graph = p.build();
  const SimulationResult result = simulate(graph, p.cost_model());
  CHECK(result.start(join) == 50);
  CHECK(result.op_binding[join.value()] == high);
  CHECK(result.critical_path == std::vector<OpId>{high, join});
}

}  // namespace
}  // namespace weft
