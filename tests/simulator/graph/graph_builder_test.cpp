#include "simulator/graph/graph_builder.hpp"

#include <catch2/catch.hpp>

#include "simulator/core/input_error.hpp"
#include "tests/support/unit_platform.hpp"

namespace weft {
namespace {

using Catch::Matchers::Contains;
using Catch::Matchers::Equals;
using test::UnitPlatform;

TEST_CASE("the builder stores ops, tensors and edges compactly", "[graph]") {
  UnitPlatform p;
  const DeviceId gpu = p.add_gpu("gpu0");
  const OpId a = p.op("a", p.compute(gpu), 10);
  const OpId b = p.op("b", p.compute(gpu), 10);
  const OpId c = p.op("c", p.comm(gpu), 10, OpClass::allreduce);
  const TensorId ab = p.connect(a, b, 64);
  const TensorId ac = p.tensor("ac", gpu, 32);
  p.builder().add_output(a, ac);
  p.builder().add_input(c, ac);
  p.builder().add_control_edge(b, c);
  const Graph graph = p.build();

  CHECK(graph.op_count() == 3);
  CHECK(graph.tensor_count() == 2);
  CHECK(graph.op_name(b) == "b");
  CHECK(graph.tensor_producer(ab) == a);
  CHECK(graph.tensor_consumers(ac).size() == 1);
  CHECK(graph.op_outputs(a).size() == 2);
  CHECK(graph.op_inputs(c).size() == 1);
  CHECK(graph.next_in_stream(a) == b);  // same in_order stream
  CHECK_FALSE(graph.next_in_stream(b).valid());
  CHECK(graph.dependency_count(a) == 0);
  CHECK(graph.dependency_count(b) == 2);  // tensor ab, and a before it on the stream
  CHECK(graph.dependency_count(c) == 2);  // tensor ac, and the control edge from b
  CHECK(graph.op_device(c) == gpu);
}

TEST_CASE("identical work is interned once", "[graph]") {
  UnitPlatform p;
  const DeviceId gpu = p.add_gpu("gpu0");
  for (int i = 0; i < 10; ++i) p.op("op", p.compute(gpu), 100);
  p.op("other", p.compute(gpu), 200);
  const Graph graph = p.build();
  CHECK(graph.op_count() == 11);
  CHECK(graph.work_count() == 2);
}

TEST_CASE("local errors are reported when the edge is added", "[graph][errors]") {
  UnitPlatform p;
  const DeviceId gpu = p.add_gpu("gpu0");
  const DeviceId link = p.add_link("link0");
  const OpId a = p.op("a", p.compute(gpu), 10);
  const OpId b = p.op("b", p.compute(gpu), 10);
  const TensorId t = p.tensor("t", gpu, 8);
  p.builder().add_output(a, t);

  CHECK_THROWS_WITH(p.builder().add_output(b, t), Equals("tensor 't' has two producers: 'a' and 'b'"));
  CHECK_THROWS_WITH(p.builder().add_input(a, t), Equals("op 'a' consumes its own output 't'"));
  CHECK_THROWS_WITH(p.builder().add_control_edge(b, b), Equals("op 'b' depends on itself"));
  CHECK_THROWS_WITH(p.builder().add_input(OpId(99), t), Equals("add_input: unknown op id 99"));
  CHECK_THROWS_WITH(p.builder().add_input(a, TensorId(7)), Equals("add_input: unknown tensor id 7"));
  CHECK_THROWS_WITH(p.builder().add_control_edge(a, OpId::none()), Contains("unknown op id"));
  CHECK_THROWS_WITH(p.tensor("on_link", link, 8), Contains("link device 'link0', which has no memory"));
}

TEST_CASE("a consumer added before its producer is still caught as a self-edge", "[graph][errors]") {
  UnitPlatform p;
  const DeviceId gpu = p.add_gpu("gpu0");
  const OpId a = p.op("a", p.compute(gpu), 10);
  const TensorId t = p.tensor("t", gpu, 8);
  p.builder().add_input(a, t);
  p.builder().add_output(a, t);
  CHECK_THROWS_WITH(p.build(), Equals("op 'a' consumes its own output 't'"));
}

TEST_CASE("a data and control cycle is reported with the ops on it", "[graph][errors]") {
  UnitPlatform p;
  const DeviceId gpu0 = p.add_gpu("gpu0");
  const DeviceId gpu1 = p.add_gpu("gpu1");
  const OpId entry = p.op("entry", p.compute(gpu0), 10);
  const OpId x = p.op("x", p.compute(gpu1), 10);
  const OpId y = p.op("y", p.comm(gpu0), 10, OpClass::send);
  const OpId z = p.op("z", p.comm(gpu1), 10, OpClass::send);
  p.connect(entry, x);
  p.connect(x, y);
  p.builder().add_control_edge(y, z);
  p.connect(z, x);
  CHECK_THROWS_WITH(p.build(), Contains("dependency cycle: 'x' -> 'y' -> 'z' -> 'x'"));
}

TEST_CASE("a cycle through stream issue order is a deadlock", "[graph][errors]") {
  UnitPlatform p;
  const DeviceId gpu = p.add_gpu("gpu0");
  const OpId first = p.op("first", p.compute(gpu), 10);
  const OpId second = p.op("second", p.compute(gpu), 10);
  p.builder().add_control_edge(second, first);  // first is issued before second on one stream
  CHECK_THROWS_WITH(p.build(), Contains("dependency cycle: 'first' -> 'second' -> 'first'"));
}

TEST_CASE("collectives issued in opposite orders on two devices deadlock", "[graph][errors]") {
  UnitPlatform p;
  const DeviceId gpu0 = p.add_gpu("gpu0");
  const DeviceId gpu1 = p.add_gpu("gpu1");
  const OpId a0 = p.op("a.0", p.comm(gpu0), 10, OpClass::allreduce);
  const OpId b0 = p.op("b.0", p.comm(gpu0), 10, OpClass::allreduce);
  const OpId b1 = p.op("b.1", p.comm(gpu1), 10, OpClass::allreduce);
  const OpId a1 = p.op("a.1", p.comm(gpu1), 10, OpClass::allreduce);
  const std::vector<OpId> a{a0, a1};
  const std::vector<OpId> b{b0, b1};
  p.builder().add_collective("a", a);
  p.builder().add_collective("b", b);
  CHECK_THROWS_WITH(p.build(),
                    Contains("collective 'a'") && Contains("collective 'b'") && Contains("dependency cycle"));
}

TEST_CASE("a collective member waiting for another member is a cycle", "[graph][errors]") {
  UnitPlatform p;
  const DeviceId gpu0 = p.add_gpu("gpu0");
  const DeviceId gpu1 = p.add_gpu("gpu1");
  const OpId m0 = p.op("m.0", p.comm(gpu0), 10, OpClass::allgather);
  const OpId m1 = p.op("m.1", p.comm(gpu1), 10, OpClass::allgather);
  p.builder().add_control_edge(m0, m1);
  const std::vector<OpId> members{m0, m1};
  p.builder().add_collective("m", members);
  CHECK_THROWS_WITH(p.build(), Contains("dependency cycle: collective 'm' -> collective 'm'"));
}

TEST_CASE("collective membership rules", "[graph][errors]") {
  UnitPlatform p;
  const DeviceId gpu0 = p.add_gpu("gpu0");
  const DeviceId gpu1 = p.add_gpu("gpu1");
  const DeviceId link = p.add_link("link0");
  const OpId gemm = p.op("gemm", p.compute(gpu0), 10);
  const OpId ar0 = p.op("ar.0", p.comm(gpu0), 10, OpClass::allreduce);
  const OpId ar0b = p.op("ar.0b", p.comm(gpu0), 10, OpClass::allreduce);
  const OpId ag1 = p.op("ag.1", p.comm(gpu1), 10, OpClass::allgather);
  const OpId on_link = p.op("on_link", p.comm(link), 10, OpClass::allreduce);

  CHECK_THROWS_WITH(p.builder().add_collective("x", std::vector<OpId>{gemm, ar0}),
                    Contains("of class gemm cannot be a collective member"));
  CHECK_THROWS_WITH(p.builder().add_collective("x", std::vector<OpId>{ar0, ar0b}),
                    Contains("two members on device 'gpu0'"));
  CHECK_THROWS_WITH(p.builder().add_collective("x", std::vector<OpId>{ar0, ag1}), Contains("different classes"));
  CHECK_THROWS_WITH(p.builder().add_collective("x", std::vector<OpId>{on_link}), Contains("in_order stream"));
  CHECK_THROWS_WITH(p.builder().add_collective("x", std::vector<OpId>{}), Contains("has no members"));
}

}  // namespace
}  // namespace weft
