// Per-layer costs of the planner's stage model: the recompute policies by their definitions, the
// frozen rule, and activation bytes and FLOPs by hand.
#include "simulator/planner/dip/layer_costs.hpp"

#include <catch2/catch.hpp>

#include "tests/simulator/planner/dip/dip_test_support.hpp"

namespace weft::dip {
namespace {

TEST_CASE("a layer's policies cost what keeping, selective and full recompute mean", "[dip][stage-model]") {
  const TrainingScenario scenario = test::load_scenario_text(test::small_vlm_scenario(""));
  const MultimodalModel model(scenario.model);
  LayerCosts costs(model, scenario.shard_context(), scenario.cluster, false);
  const int vit_layer = 1;
  const LayerCost& cost = costs.at(vit_layer, {0, 4, 0.0, 0.0});
  REQUIRE(cost.forward > 0);
  REQUIRE(cost.backward > cost.forward);  // input and weight gradients
  CHECK(cost.latency(LayerPolicy::keep) == cost.forward + cost.backward);
  CHECK(cost.latency(LayerPolicy::selective) == cost.forward + cost.backward + cost.attention_forward);
  CHECK(cost.latency(LayerPolicy::full) == 2 * cost.forward + cost.backward);
  CHECK(cost.attention_forward > 0);
  CHECK(cost.attention_forward < cost.forward);
  // Full recompute keeps the layer's input: 4 images x 169 tokens x hidden 1792 x 2 bytes (no SP).
  CHECK(cost.memory(LayerPolicy::full) == 4 * 169 * 1792 * 2);
  CHECK(cost.memory(LayerPolicy::keep) == cost.saved);
  CHECK(cost.memory(LayerPolicy::selective) <= cost.memory(LayerPolicy::keep));
  CHECK(cost.memory(LayerPolicy::full) < cost.memory(LayerPolicy::selective));
  // Attention is within each image: twice the images, twice the FLOPs and bytes.
  const LayerCost& twice = costs.at(vit_layer, {0, 8, 0.0, 0.0});
  CHECK(twice.training_flops == Approx(2 * cost.training_flops).epsilon(1e-12));
  CHECK(twice.saved == 2 * cost.saved);
  // A ViT 5B layer's parameters over TP2: attention 4 h^2 and MLP 2 h f (with biases and norms),
  // about 12.8M + 27.5M; and every one trains.
  CHECK(cost.parameters == Approx((4.0 * 1792 * 1792 + 2.0 * 1792 * 15360) / 2).epsilon(0.01));
  CHECK(cost.trained == cost.parameters);
  CHECK(costs.module_of(3) == 0);
  CHECK(costs.module_of(4) == 2);  // the projector has no layers of its own
}

TEST_CASE("a frozen module with nothing trainable upstream keeps nothing and has no backward pass",
          "[dip][stage-model]") {
  const TrainingScenario scenario = test::load_scenario_text(test::small_vlm_scenario("", "", true));
  const MultimodalModel model(scenario.model);
  LayerCosts costs(model, scenario.shard_context(), scenario.cluster, false);
  const LayerCost& vision = costs.at(1, {0, 4, 0.0, 0.0});
  CHECK(vision.forward > 0);
  CHECK(vision.backward == 0);
  CHECK(vision.saved == 0);
  CHECK(vision.memory(LayerPolicy::full) == 0);
  CHECK(vision.trained == 0);
  CHECK(vision.parameters > 0);
  // The language model trains: its layers have backward passes.
  CHECK(costs.at(5, {2048, 0, 0.0, 0.0}).backward > 0);
}

TEST_CASE("tensor-parallel collectives cost time, and none on an ideal network", "[dip][stage-model]") {
  const TrainingScenario scenario = test::load_scenario_text(test::small_vlm_scenario(""));
  const MultimodalModel model(scenario.model);
  LayerCosts real(model, scenario.shard_context(), scenario.cluster, false);
  LayerCosts ideal(model, scenario.shard_context(), scenario.cluster, true);
  const SampleShape text{2048, 0, 0.0, 0.0};
  CHECK(real.at(5, text).forward > ideal.at(5, text).forward);
  CHECK(real.at(5, text).backward >= ideal.at(5, text).backward);
  CHECK(real.at(5, text).saved == ideal.at(5, text).saved);
}

}  // namespace
}  // namespace weft::dip
