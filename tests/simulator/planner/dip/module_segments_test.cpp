// The modality-aware partition of a model's modules (papers/001 §5), checked against the rules
// applied by hand to the stage model's costs.
#include "simulator/planner/dip/module_segments.hpp"

#include <catch2/catch.hpp>

#include <cmath>

#include "tests/simulator/planner/dip/dip_test_support.hpp"

namespace weft::dip {
namespace {

using Catch::Matchers::Contains;

double module_seconds(LayerCosts& costs, int first, int layers, const SampleShape& shape, double* flops = nullptr) {
  double seconds = 0.0;
  for (int layer = first; layer < first + layers; ++layer) {
    seconds += static_cast<double>(costs.at(layer, shape).latency(LayerPolicy::keep)) * 1e-9;
    if (flops != nullptr) *flops += costs.at(layer, shape).training_flops;
  }
  return seconds;
}

TEST_CASE("a module's items and what a sub-microbatch of them holds", "[dip][partition]") {
  const MultimodalSpec spec = test::load_scenario_text(test::small_vlm_scenario("")).model;
  const SampleShape shape{2048, 7, 0.0, 0.0};
  CHECK(module_items(spec.modules[0], shape) == 7);
  CHECK(module_items(spec.modules[2], shape) == 1);
  CHECK(module_items(spec.modules[0], {2048, 0, 0.0, 0.0}) == 0);
  CHECK(sub_microbatch_shape(spec.modules[0], shape, 3) == SampleShape{0, 3, 0.0, 0.0});
  CHECK(sub_microbatch_shape(spec.modules[2], shape, 1) == SampleShape{2048, 0, 0.0, 0.0});
}

TEST_CASE("sub-microbatch size, segments and chunks follow §5's rules", "[dip][partition]") {
  const TrainingScenario scenario = test::load_scenario_text(test::small_vlm_scenario(""));
  const MultimodalModel model(scenario.model);
  LayerCosts costs(model, scenario.shard_context(), scenario.cluster, false);
  const std::vector<SampleShape> shapes(4, SampleShape{2048, 6, 0.0, 0.0});
  const std::vector<ModuleSegments> modules = plan_module_segments(costs, shapes, {.pp = 2});
  REQUIRE(modules.size() == 2);  // the projector rides with the ViT's last layer
  const ModuleSegments& vision = modules[0];
  const ModuleSegments& language = modules[1];
  CHECK(vision.first_layer == 0);
  CHECK(language.first_layer == 4);

  // B: the smallest size within 95% of the best efficiency over 1..48, by brute force.
  std::vector<double> efficiency;
  for (int size = 1; size <= 48; ++size) {
    double flops = 0.0;
    const double seconds = module_seconds(costs, 0, 4, {0, size, 0.0, 0.0}, &flops);
    efficiency.push_back(flops / seconds);
  }
  const double best = *std::max_element(efficiency.begin(), efficiency.end());
  int smallest = 0;
  while (efficiency[static_cast<std::size_t>(smallest)] < 0.95 * best) ++smallest;
  CHECK(vision.sub_microbatch == smallest + 1);
  CHECK(vision.sub_microbatch > 1);  // launch overheads make single images inefficient

  // T_i and K_i = floor(T_i / T_1), at most layers / pp.
  const double t_vision = module_seconds(costs, 0, 4, {0, vision.sub_microbatch, 0.0, 0.0});
  const double t_language = module_seconds(costs, 4, 4, {2048, 0, 0.0, 0.0});
  CHECK(vision.latency_s == Approx(t_vision));
  CHECK(language.latency_s == Approx(t_language));
  const double fastest = std::min(t_vision, t_language);
  CHECK(vision.segments == std::min(2, static_cast<int>(std::floor(t_vision / fastest + 1e-9))));
  CHECK(language.segments == std::min(2, static_cast<int>(std::floor(t_language / fastest + 1e-9))));
  CHECK(language.chunk_layers.size() == static_cast<std::size_t>(2 * language.segments));
  CHECK(language.chunk_first_layer(1) == 4 + language.chunk_layers[0]);
  CHECK_FALSE(language.sub_microbatch > 0);  // text is not split

  // A size given by hand is taken as is.
  CHECK(plan_module_segments(costs, shapes, {.pp = 2, .sub_microbatch = 5})[0].sub_microbatch == 5);
}

TEST_CASE("a module with fewer layers than pipeline ranks cannot be partitioned", "[dip][partition][errors]") {
  const TrainingScenario scenario = test::load_scenario_text(test::small_vlm_scenario(""));
  const MultimodalModel model(scenario.model);
  LayerCosts costs(model, scenario.shard_context(), scenario.cluster, false);
  const std::vector<SampleShape> shapes(2, SampleShape{2048, 6, 0.0, 0.0});
  CHECK_THROWS_WITH(plan_module_segments(costs, shapes, {.pp = 8}),
                    Contains("model.modules[0] (vision): 4 layers cannot spread over pp 8 ranks"));
}

}  // namespace
}  // namespace weft::dip
