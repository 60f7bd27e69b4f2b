#include "simulator/planner/dflop/model_profiler.hpp"

#include <catch2/catch.hpp>

#include "simulator/workload/training_workload.hpp"
#include "tests/simulator/planner/dflop/dflop_test_support.hpp"

namespace weft::dflop {
namespace {

TEST_CASE("each component may take the TP degrees of a node that divide its modules", "[dflop]") {
  const TrainingScenario scenario = test::load_scenario_text(test::small_dflop_scenario());
  ModelCosts costs(scenario);
  // ViT 5B (16 heads, FFN 15,360), the projector (4,096), Llama 3 8B (32 heads, 8 KV heads).
  CHECK(costs.tp_degrees(Component::encoder) == std::vector<int>{1, 2, 4, 8});
  CHECK(costs.tp_degrees(Component::llm) == std::vector<int>{1, 2, 4, 8});
  CHECK(costs.layer_range(Component::encoder) == std::pair{0, 4});
  CHECK(costs.layer_range(Component::llm) == std::pair{4, 8});
  std::string text = test::small_dflop_scenario();
  const std::string vit = R"({"base": "vit-5b", "layers": 4})";
  text.replace(text.find(vit), vit.size(), R"({"base": "vit-5b", "layers": 4, "heads": 14})");
  const TrainingScenario fourteen_heads = test::load_scenario_text(text);
  CHECK(ModelCosts(fourteen_heads).tp_degrees(Component::encoder) == std::vector<int>{1, 2});
}

TEST_CASE("the model profiler's rates are FLOPs over weft's per-layer times at each grid point", "[dflop]") {
  const TrainingScenario scenario = test::load_scenario_text(test::small_dflop_scenario());
  ModelCosts costs(scenario);
  const ModelProfile profile = profile_model(costs, {16, 256, 4096});
  REQUIRE(profile.encoder.size() == 4);
  REQUIRE(profile.llm.size() == 4);
  const ComponentProfile& encoder = profile.encoder[1];
  REQUIRE(encoder.tp == 2);
  CHECK(encoder.throughput.x() == std::vector<double>{1, 2, 4, 8, 16});
  // The encoder at TP 2 on 4 images, priced layer by layer here.
  dip::LayerCosts& tp2 = costs.at_tp(2);
  double flops = 0.0;
  TimeNs time = 0;
  Bytes kept = 0;
  for (int layer = 0; layer < 4; ++layer) {
    const dip::LayerCost& cost = tp2.in_stage(layer, {256, 4, 0.0, 0.0});
    flops += cost.training_flops;
    time += cost.latency(costs.policy());
    kept += cost.memory(costs.policy());
  }
  CHECK(encoder.throughput.at(4.0) == Approx(flops / (static_cast<double>(time) / 1e9)));
  CHECK(encoder.activation_bytes(4, 4.0) == Approx(static_cast<double>(kept)).epsilon(1e-9));
  // The LLM at TP 1 on 1,024 tokens: attention apart from the rest.
  const ComponentProfile& llm = profile.llm.front();
  CHECK(llm.throughput.x() == std::vector<double>{256, 512, 1024, 2048, 4096});
  dip::LayerCosts& tp1 = costs.at_tp(1);
  REQUIRE(scenario.parallel.recompute == RecomputePolicy::none);  // each pass once
  double attention_flops = 0.0;
  double linear_flops = 0.0;
  TimeNs attention_time = 0;
  TimeNs linear_time = 0;
  for (int layer = 4; layer < 8; ++layer) {
    const dip::LayerCost& cost = tp1.in_stage(layer, {1024, 0, 0.0, 0.0});
    attention_flops += cost.attention_flops;
    linear_flops += cost.training_flops - cost.attention_flops;
    attention_time += cost.attention_forward + cost.attention_backward;
    linear_time += cost.forward + cost.backward - cost.attention_forward - cost.attention_backward;
  }
  CHECK(llm.attention_throughput.at(1024.0) == Approx(attention_flops / (static_cast<double>(attention_time) / 1e9)));
  CHECK(llm.throughput.at(1024.0) == Approx(linear_flops / (static_cast<double>(linear_time) / 1e9)));
}

TEST_CASE("a sample's FLOPs: linear in images and tokens, attention quadratic in its length", "[dflop]") {
  const TrainingScenario scenario = test::load_scenario_text(test::small_dflop_scenario());
  ModelCosts costs(scenario);
  const ModelProfile profile = profile_model(costs, {4, 256, 1024});
  dip::LayerCosts& whole = costs.at_tp(1);
  double three_images = 0.0;
  double attention = 0.0;
  double linear = 0.0;
  for (int layer = 0; layer < 4; ++layer) three_images += whole.in_stage(layer, {256, 3, 0.0, 0.0}).training_flops;
  for (int layer = 4; layer < 8; ++layer) {
    const dip::LayerCost& cost = whole.in_stage(layer, {3072, 0, 0.0, 0.0});
    attention += cost.attention_flops;
    linear += cost.training_flops - cost.attention_flops;
  }
  CHECK(profile.flops.encoder(3) == Approx(three_images));
  CHECK(profile.flops.llm_attention(3072) == Approx(attention));
  CHECK(profile.flops.llm_linear(3072) == Approx(linear));
}

TEST_CASE("a component's model state is what a rank holds at one layer and at all of them", "[dflop]") {
  TrainingScenario scenario = test::load_scenario_text(test::small_dflop_scenario());
  ModelCosts costs(scenario);
  const ModelProfile profile = profile_model(costs, {1, 256, 256});
  const ComponentProfile& llm = profile.llm[1];  // TP 2
  std::int64_t parameters = 0;
  std::int64_t trained = 0;
  for (int layer = 4; layer < 8; ++layer) {
    parameters += costs.at_tp(2).at(layer, kOneOfEach).parameters;
    trained += costs.at_tp(2).at(layer, kOneOfEach).trained;
  }
  scenario.parallel.zero = 0;
  CHECK(llm.model_state_bytes(4) == rank_static_memory(scenario, parameters, trained, 0).total());
  CHECK(llm.model_state_bytes(1) < llm.model_state_bytes(2));
  CHECK(llm.model_state_bytes(2) - llm.model_state_bytes(1) ==
        Approx(static_cast<double>(llm.model_state_bytes(4) - llm.model_state_bytes(1)) / 3).margin(1));
}

}  // namespace
}  // namespace weft::dflop
