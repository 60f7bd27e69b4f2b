#include "simulator/workload/pipeline_layer_steps.hpp"

#include <catch2/catch.hpp>

#include "simulator/workload/graph_size.hpp"
#include "simulator/workload/multimodal_model.hpp"
#include "tests/simulator/workload/multimodal_test_support.hpp"

namespace weft {
namespace {

TEST_CASE("a range of layers has the steps of its layers in order", "[workload][modality]") {
  const TrainingScenario scenario = test::scenario_from(
      test::scenario_text(test::vlm_model(false, false), R"({"tp": 2, "pp": 4, "dp": 1, "sequence_parallel": true})",
                          R"({"global_batch": 8, "seq_len": 256, "images": 2})"));
  const PipelineLayerSteps layers = pipeline_layer_steps(scenario, false);
  REQUIRE(layers.steps.size() == 8);
  const MultimodalModel model(scenario.model, scenario.parallel.cp_algorithm);
  for (int first = 0; first < 8; ++first) {
    for (int end = first + 1; end <= 8; ++end) {
      std::vector<Step> steps;
      std::vector<int> blocks;
      model.append_steps(scenario.shard_context(), scenario.training.sample(), {first, end, first == 0, end == 8},
                         false, steps, blocks);
      std::vector<std::string> names;
      std::vector<int> joined_blocks;
      for (int layer = first; layer < end; ++layer) {
        for (const Step& step : layers.steps[static_cast<std::size_t>(layer)]) names.push_back(step.name);
        const auto& b = layers.blocks[static_cast<std::size_t>(layer)];
        joined_blocks.insert(joined_blocks.end(), b.begin(), b.end());
      }
      std::vector<std::string> expected;
      for (const Step& step : steps) expected.push_back(step.name);
      INFO(first << ".." << end);
      CHECK(names == expected);
      CHECK(joined_blocks == blocks);
    }
  }
}

TEST_CASE("the graph size from shared layer steps is the size from the scenario alone", "[workload][modality]") {
  for (const char* parallel : {R"({"tp": 2, "pp": 4, "dp": 1, "sequence_parallel": true})",
                               R"({"tp": 1, "pp": 2, "dp": 4, "vpp": 2, "schedule": "interleaved"})",
                               R"({"tp": 2, "pp": 2, "dp": 2, "modality_stages": {"vision": 1, "language": 1}})",
                               R"({"tp": 1, "pp": 4, "dp": 2, "zero": 3, "recompute": "full"})"}) {
    const TrainingScenario scenario = test::scenario_from(test::scenario_text(
        test::vlm_model(true, false), parallel, R"({"global_batch": 16, "seq_len": 256, "images": 2})"));
    const PipelineLayerSteps layers = pipeline_layer_steps(scenario, false);
    const GraphSize alone = estimate_training_graph(scenario, {});
    const GraphSize shared = estimate_training_graph(scenario, {}, &layers);
    INFO(parallel);
    CHECK(shared.ops == alone.ops);
    CHECK(shared.held_ops == alone.held_ops);
    CHECK(shared.ops_per_microbatch == alone.ops_per_microbatch);
  }
}

}  // namespace
}  // namespace weft
