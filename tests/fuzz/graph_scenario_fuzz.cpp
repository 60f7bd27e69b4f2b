// Graph scenarios: read and simulated.
#include "simulator/engine/engine.hpp"
#include "simulator/io/graph_scenario.hpp"
#include "tests/fuzz/fuzz_input.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return weft::fuzz::load_json(data, size, [](const weft::JsonCursor& root) {
    const weft::GraphScenario scenario = weft::load_graph_scenario(root, weft::fuzz::kMaxOps);
    weft::simulate(scenario.graph, scenario.cost_model);
  });
}
