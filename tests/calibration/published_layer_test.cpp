// A whole transformer layer of the A100 profile against one measured on A100s: Korthikanti et al.
// 2022 (arXiv:2205.05198), Table 4, times the forward and backward pass of one layer of their 22B
// GPT (TP 8, micro-batch 4, 2,048 tokens) under each recomputation policy. The validation suite's
// case scenarios/validation/korthikanti2022-a100-22b-*.json describes the run.
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include <filesystem>
#include <string>

#include "tests/simulator/workload/training_test_support.hpp"
#include "tests/support/run_command.hpp"

namespace weft {
namespace {

// Table 4 (milliseconds): forward, and backward including any recomputation.
struct LayerTimes {
  double forward_ms = 0.0;
  double backward_ms = 0.0;
};

// The 22B case with `sequence_parallel` and `recompute` in its plan.
TrainingScenario korthikanti_22b(bool sequence_parallel, const std::string& recompute) {
  nlohmann::json text = nlohmann::json::parse(test::read_file(std::filesystem::path(WEFT_SOURCE_DIR) / "scenarios" /
                                                              "validation" / "korthikanti2022-a100-22b-full.json"));
  nlohmann::json scenario = text["scenario"];
  scenario["parallel"]["sequence_parallel"] = sequence_parallel;
  scenario["parallel"]["recompute"] = recompute;
  // The cluster's own (bundled A100) profile: no calibration given.
  const JsonDocument document = JsonDocument::parse_text(scenario.dump(), "korthikanti-22b.json");
  return load_training_scenario(document.root());
}

// weft's times of one middle layer (L24) of the one microbatch: the sum of its ops' durations, by
// pass (its ops run one after the other on the compute stream).
LayerTimes simulated_layer(const TrainingScenario& scenario) {
  const test::TrainingRun run = test::run_training(scenario, {.composites = false});
  LayerTimes times;
  const Graph& graph = run.workload.graph;
  for (std::size_t i = 0; i < graph.op_count(); ++i) {
    const OpId op(static_cast<OpId::value_type>(i));
    const std::string name = graph.display_name(op);
    if (name.rfind("L24.", 0) != 0) continue;
    const double ms = static_cast<double>(run.result.end(op) - run.result.start(op)) / 1e6;
    (name.find(" fwd ") != std::string::npos ? times.forward_ms : times.backward_ms) += ms;
  }
  return times;
}

TEST_CASE("the A100 profile times a 22B layer within 15% of Korthikanti et al.'s measurement", "[calibration][a100]") {
  // Table 4: "Baseline no recompute" 7.7 and 11.9 ms; "Selective + Sequence" 7.2 and 13.1 ms.
  const std::vector<std::pair<TrainingScenario, LayerTimes>> cases = {
      {korthikanti_22b(false, "none"), {7.7, 11.9}},
      {korthikanti_22b(true, "selective"), {7.2, 13.1}},
  };
  for (const auto& [scenario, measured] : cases) {
    const LayerTimes weft = simulated_layer(scenario);
    INFO("weft forward " << weft.forward_ms << " ms against " << measured.forward_ms << ", backward "
                         << weft.backward_ms << " ms against " << measured.backward_ms);
    CHECK(weft.forward_ms == Approx(measured.forward_ms).epsilon(0.15));
    CHECK(weft.backward_ms == Approx(measured.backward_ms).epsilon(0.15));
  }
}

}  // namespace
}  // namespace weft
