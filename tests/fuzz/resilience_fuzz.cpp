// Resilience files (weft goodput's RESILIENCE) and failure traces. The first byte picks which: 0, a
// resilience file, read with its traces relative to the bundled resilience folder, then a short
// study of a small job's runs under it (at most 2 seeds of 2 days: the runs, not their length,
// are what is fuzzed); 1, a failure trace.
#include <algorithm>
#include <sstream>
#include <string>

#include "simulator/core/scenario_library.hpp"
#include "simulator/engine/engine.hpp"
#include "simulator/resilience/failure_model.hpp"
#include "simulator/resilience/goodput_study.hpp"
#include "simulator/resilience/run_setup.hpp"
#include "simulator/workload/training_workload.hpp"
#include "tests/fuzz/fuzz_input.hpp"

namespace {

// Llama 3 8B cut to 4 layers on two nodes of 8 H100s: the iteration every run repeats.
struct Job {
  weft::TrainingScenario scenario;
  weft::TrainingReport report;
};

const Job& job() {
  static const Job small = [] {
    const weft::JsonDocument document = weft::JsonDocument::parse_text(
        R"({"model": {"base": "llama3-8b", "layers": 4}, "cluster": {"base": "dgx-h100", "gpus": 16},
            "parallel": {"tp": 2, "pp": 2, "dp": 4}, "training": {"global_batch": 16, "seq_len": 2048}})",
        "job.json");
    Job out{weft::load_training_scenario(document.root()), {}};
    const weft::TrainingWorkload workload = weft::build_training_workload(out.scenario, {.name_ops = false});
    out.report =
        weft::make_training_report(out.scenario, workload, weft::simulate(workload.graph, *workload.cost_model));
    return out;
  }();
  return small;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  if (data[0] % 2 == 1) {
    try {
      std::istringstream in{std::string(weft::fuzz::text_of(data + 1, size - 1))};
      weft::read_failure_trace(in, "fuzz.csv");
    } catch (const weft::InputError&) {
    }
    return 0;
  }
  return weft::fuzz::load_json(data + 1, size - 1, [](const weft::JsonCursor& root) {
    const Job& small = job();
    weft::ResilienceSpec spec = weft::load_resilience_spec(root, small.scenario.cluster.gpus_per_node,
                                                           weft::checkpoint_bytes(small.scenario, small.report),
                                                           weft::ScenarioLibrary::root() / "resilience");
    spec.seeds = std::min(spec.seeds, 2);
    spec.days = std::min(spec.days, 2.0);
    const weft::RunSetup setup = weft::make_run_setup(small.scenario, small.report, spec, 8);
    weft::run_goodput_study(setup, spec.first_seed, spec.seeds, {}, {});
  });
}
