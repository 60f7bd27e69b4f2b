#include "simulator/io/graph_scenario.hpp"

#include <catch2/catch.hpp>

#include "simulator/engine/engine.hpp"

namespace weft {
namespace {

using Catch::Matchers::Contains;
using Catch::Matchers::Equals;

// 1 FLOP/ns and 1 network byte/ns: durations equal work.
constexpr const char* kUnitSpec =
    R"({"name": "unit", "kind": "gpu", "peak_tflops": {"bf16": 0.001}, "network_bandwidth_GBps": 1, "memory_MiB": 1})";

std::string scenario(const std::string& tensors, const std::string& ops, const std::string& extra = "") {
  return std::string(R"({"devices": [{"name": "gpu0", "spec": )") + kUnitSpec + R"(},
                                     {"name": "gpu1", "spec": )" +
         kUnitSpec + R"(}],
           "tensors": [)" +
         tensors + R"(], "ops": [)" + ops + "]" + extra + "}";
}

GraphScenario load(const std::string& text) {
  const JsonDocument document = JsonDocument::parse_text(text, "scenario.json");
  return load_graph_scenario(document.root());
}

TEST_CASE("a graph scenario loads and simulates", "[scenario]") {
  const GraphScenario loaded = load(scenario(
      R"({"name": "x", "device": "gpu0", "kind": "activation", "bytes": 100})",
      R"({"name": "a", "class": "gemm", "device": "gpu0", "stream": "compute", "flops": 1000, "outputs": ["x"]},
         {"name": "b", "class": "gemm", "device": "gpu1", "stream": "compute", "flops": 500, "inputs": ["x"]},
         {"name": "ar0", "class": "allreduce", "device": "gpu0", "stream": "comm", "network_bytes": 300,
          "collective": "ar", "after": ["a"]},
         {"name": "ar1", "class": "allreduce", "device": "gpu1", "stream": "comm", "network_bytes": 200,
          "collective": "ar", "after": ["b"]})",
      R"(, "cost": {"default": {"launch_overhead_ns": 10}})"));
  const Graph& graph = loaded.graph;
  REQUIRE(graph.op_count() == 4);
  CHECK(graph.collective_count() == 1);
  CHECK(graph.device(DeviceId(0)).memory_capacity == kBytesPerMiB);
  const SimulationResult result = simulate(graph, loaded.cost_model);
  // a: [0, 1010); b: [1010, 1520); the all-reduce starts at 1520 and lasts max(310, 210).
  CHECK(result.end(OpId(0)) == 1010);
  CHECK(result.end(OpId(1)) == 1520);
  CHECK(result.start(OpId(2)) == 1520);
  CHECK(result.makespan == 1830);
}

TEST_CASE("default streams and device memory overrides", "[scenario]") {
  const GraphScenario loaded = load(R"({"devices": [
      {"name": "cpu", "spec": {"name": "c", "kind": "cpu", "peak_tflops": {"fp32": 1}}, "memory_MiB": 2},
      {"name": "gpu", "spec": "h100-sxm", "streams": ["main", {"name": "side", "policy": "first_ready"}]},
      {"name": "nic", "spec": "ib-ndr400-nic"}],
    "ops": [{"name": "a", "class": "host", "device": "cpu", "dtype": "fp32", "flops": 1},
            {"name": "b", "class": "send", "device": "nic", "network_bytes": 1},
            {"name": "c", "class": "gemm", "device": "gpu", "stream": "side"}]})");
  const Graph& graph = loaded.graph;
  CHECK(graph.device(DeviceId(0)).memory_capacity == 2 * kBytesPerMiB);
  CHECK(graph.stream(graph.op_stream(OpId(0))).name == "compute");
  CHECK(graph.stream(graph.op_stream(OpId(1))).name == "transfer");
  CHECK(graph.stream(graph.op_stream(OpId(1))).policy == StreamPolicy::first_ready);
  CHECK(graph.stream(graph.op_stream(OpId(2))).policy == StreamPolicy::first_ready);
}

TEST_CASE("scenario errors name the JSON path", "[scenario][errors]") {
  const std::string tensor = R"({"name": "x", "device": "gpu0", "kind": "activation", "bytes": 8})";
  const std::string gemm = R"({"name": "a", "class": "gemm", "device": "gpu0", "stream": "compute")";
  CHECK_THROWS_WITH(load(scenario(tensor, gemm + R"(, "flops": "many"})")),
                    Equals("ops[0].flops: expected a number, got a string"));
  CHECK_THROWS_WITH(load(scenario(tensor, gemm + R"(, "flop": 1})")), Contains("ops[0].flop: unknown field"));
  CHECK_THROWS_WITH(load(scenario(tensor, R"({"name": "a", "class": "gemm", "device": "gpu9"})")),
                    Equals("ops[0].device: unknown device 'gpu9'"));
  CHECK_THROWS_WITH(load(scenario(tensor, R"({"name": "a", "class": "gemm", "device": "gpu0"})")),
                    Equals("ops[0]: missing required field 'stream' (device 'gpu0' has several streams)"));
  CHECK_THROWS_WITH(load(scenario(tensor, gemm + R"(, "inputs": ["y"]})")),
                    Equals("ops[0].inputs[0]: unknown tensor 'y'"));
  CHECK_THROWS_WITH(load(scenario(tensor, gemm + R"(, "inputs": ["x", "x"]})")),
                    Equals("ops[0].inputs[1]: tensor 'x' is listed twice"));
  CHECK_THROWS_WITH(load(scenario(tensor, gemm + R"(, "inputs": ["x"], "outputs": ["x"]})")),
                    Equals("ops[0].outputs[0]: op consumes its own output 'x'"));
  CHECK_THROWS_WITH(load(scenario(tensor, gemm + R"(, "after": ["zz"]})")), Equals("ops[0].after[0]: unknown op 'zz'"));
  CHECK_THROWS_WITH(load(scenario(tensor, gemm + R"(, "collective": "c"})")),
                    Equals("ops[0].collective: an op of class gemm cannot be a collective member"));
  CHECK_THROWS_WITH(load(scenario(tensor, gemm + "}," + gemm + "}")), Equals("ops[1].name: duplicate op name 'a'"));
  CHECK_THROWS_WITH(load(scenario(tensor + "," + tensor, gemm + "}")),
                    Equals("tensors[1].name: duplicate tensor name 'x'"));
  CHECK_THROWS_WITH(load(scenario(R"({"name": "x", "device": "gpu0", "kind": "weights", "bytes": 8})", gemm + "}")),
                    Contains("tensors[0].kind: 'weights' is not one of parameter"));
  CHECK_THROWS_WITH(load(R"({"devices": [], "ops": []})"), Equals("devices: expected at least one device"));
  CHECK_THROWS_WITH(load(R"({"ops": []})"), Equals("(top level): missing required field 'devices'"));
  CHECK_THROWS_WITH(load(scenario(tensor, R"({"name": "a", "class": "allreduce", "device": "gpu0", "stream": "comm",
                                              "collective": "c"},
                                             {"name": "b", "class": "allgather", "device": "gpu1", "stream": "comm",
                                              "collective": "c"})")),
                    Contains("ops[0].collective: collective members 'a' and 'b' are of different classes"));
}

TEST_CASE("a workspace tensor counts while its producer runs", "[scenario]") {
  // a [0, 1000) holds 300 B of scratch and hands x (100 B) to b [1000, 1500) on the same GPU.
  const std::string tensors = R"({"name": "x", "device": "gpu0", "kind": "activation", "bytes": 100},
                                 {"name": "scratch", "device": "gpu0", "kind": "workspace", "bytes": 300})";
  const GraphScenario loaded =
      load(scenario(tensors, R"({"name": "a", "class": "gemm", "device": "gpu0", "stream": "compute", "flops": 1000,
                   "outputs": ["x", "scratch"]},
                  {"name": "b", "class": "gemm", "device": "gpu0", "stream": "compute", "flops": 500,
                   "inputs": ["x"]})"));
  const SimulationResult result = simulate(loaded.graph, loaded.cost_model);
  CHECK(result.devices[0].peak_memory == 400);  // x and the scratch, during a
  CHECK(result.makespan == 1500);
  CHECK_THROWS_WITH(load(scenario(tensors, R"({"name": "a", "class": "gemm", "device": "gpu0", "stream": "compute",
                                 "outputs": ["x", "scratch"]},
                                {"name": "b", "class": "gemm", "device": "gpu0", "stream": "compute",
                                 "inputs": ["x", "scratch"]})")),
                    Contains("workspace tensor 'scratch' is read by op 'b'"));
}

TEST_CASE("a cycle in a scenario names the ops", "[scenario][errors]") {
  CHECK_THROWS_WITH(load(scenario("", R"({"name": "a", "class": "gemm", "device": "gpu0", "stream": "compute",
                                          "after": ["b"]},
                                         {"name": "b", "class": "gemm", "device": "gpu1", "stream": "compute",
                                          "after": ["a"]})")),
                    Equals("ops: dependency cycle: 'a' -> 'b' -> 'a' (data, control, stream-order or collective "
                           "dependencies)"));
}

}  // namespace
}  // namespace weft
