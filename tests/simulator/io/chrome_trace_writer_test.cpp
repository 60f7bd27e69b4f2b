#include "simulator/io/chrome_trace_writer.hpp"

#include <cstdlib>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "simulator/engine/engine.hpp"
#include "tests/support/unit_platform.hpp"

namespace weft {
namespace {

using test::UnitPlatform;

struct TinyRun {
  TinyRun() {
    const DeviceId gpu0 = p.add_gpu("gpu0");
    const DeviceId gpu1 = p.add_gpu("gpu1");
    const OpId a = p.op("layer0.fwd \"qkv\"", p.compute(gpu0), 1500);
    const OpId b = p.op("layer1.fwd", p.compute(gpu1), 2250);
    const OpId m0 = p.op("grad.ar", p.comm(gpu0), 500, OpClass::allreduce);
    const OpId m1 = p.op("grad.ar", p.comm(gpu1), 700, OpClass::allreduce);
    p.connect(a, b, 4096);
    p.builder().add_control_edge(b, m1);
    p.builder().add_collective("grad", std::vector<OpId>{m0, m1});
    graph = std::make_unique<Graph>(p.build());
    SimulationOptions options;
    options.record_memory_timeline = true;
    result = simulate(*graph, p.cost_model(), options);
    std::ostringstream out;
    write_chrome_trace(out, *graph, result);
    text = out.str();
  }
  UnitPlatform p;
  std::unique_ptr<Graph> graph;
  SimulationResult result;
  std::string text;
};

TEST_CASE("the trace is valid Chrome Trace Event JSON with the simulated times", "[trace]") {
  TinyRun run;
  const auto trace = nlohmann::json::parse(run.text);
  REQUIRE(trace.contains("traceEvents"));
  CHECK(trace["displayTimeUnit"] == "ns");
  std::map<std::string, int> phases;
  std::map<std::string, std::pair<double, double>> spans;  // name -> (ts, dur) in us
  std::set<int> flow_ids_started;
  std::set<int> flow_ids_finished;
  for (const auto& event : trace["traceEvents"]) {
    const std::string ph = event.at("ph");
    ++phases[ph];
    CHECK(event.at("pid").get<int>() >= 1);
    if (ph == "X") {
      CHECK(event.at("tid").get<int>() >= 1);
      spans[event.at("name")] = {event.at("ts").get<double>(), event.at("dur").get<double>()};
    }
    if (ph == "s") flow_ids_started.insert(event.at("id").get<int>());
    if (ph == "f") {
      CHECK(event.at("bp") == "e");
      flow_ids_finished.insert(event.at("id").get<int>());
    }
    if (ph == "C") CHECK(event.at("args").contains("bytes"));
  }
  CHECK(phases["X"] == 4);
  CHECK(phases["M"] == 2 * 2 + 2 * 4);  // name and sort index per device and per stream
  CHECK(phases["s"] == 1);              // layer0 (gpu0) -> layer1 (gpu1)
  CHECK(flow_ids_started == flow_ids_finished);
  CHECK(phases["C"] >= 2);
  // Hand-computed: layer0 [0, 1.5 us); layer1 [1.5, 3.75 us); the all-reduce waits for layer1.
  CHECK(spans.at("layer0.fwd \"qkv\"") == std::pair<double, double>{0.0, 1.5});
  CHECK(spans.at("layer1.fwd") == std::pair<double, double>{1.5, 2.25});
  CHECK(spans.at("grad.ar") == std::pair<double, double>{3.75, 0.7});
}

// The exact layout of a small trace (format only; the numbers are checked above).
TEST_CASE("the trace format matches the golden file", "[trace][golden]") {
  TinyRun run;
  const std::string golden_path = std::string(WEFT_TESTS_DIR) + "/golden/tiny_trace.json";
  if (std::getenv("WEFT_UPDATE_GOLDEN") != nullptr) std::ofstream(golden_path) << run.text;
  std::ifstream in(golden_path);
  REQUIRE(in.good());
  std::stringstream golden;
  golden << in.rdbuf();
  CHECK(run.text == golden.str());
}

}  // namespace
}  // namespace weft
