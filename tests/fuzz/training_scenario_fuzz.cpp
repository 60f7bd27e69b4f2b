// Training scenarios: read, size-checked, and, when small, built and simulated.
#include "simulator/engine/engine.hpp"
#include "simulator/workload/training_workload.hpp"
#include "tests/fuzz/fuzz_input.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return weft::fuzz::load_json(data, size, [](const weft::JsonCursor& root) {
    const weft::TrainingScenario scenario = weft::load_training_scenario(root);
    const weft::TrainingWorkload workload =
        weft::build_training_workload(scenario, {.name_ops = false, .max_ops = weft::fuzz::kMaxOps});
    weft::simulate(workload.graph, *workload.cost_model);
  });
}
