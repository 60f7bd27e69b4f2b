#include "simulator/planner/entrain/sample_cost_model.hpp"

#include <cmath>

#include <catch2/catch.hpp>

#include "simulator/core/input_error.hpp"
#include "tests/simulator/planner/dip/dip_test_support.hpp"

namespace weft::entrain {
namespace {

TEST_CASE("a quadratic through points on a quadratic is that quadratic", "[entrain][cost]") {
  const Quadratic truth{2e-9, 3e-6, 1e-4};
  std::vector<double> x{64, 256, 1024, 4096, 16384};
  std::vector<double> y;
  for (const double v : x) y.push_back(truth.at(v));
  const Quadratic fit = fit_quadratic(x, y);
  CHECK(fit.a == Approx(truth.a).epsilon(1e-9));
  CHECK(fit.b == Approx(truth.b).epsilon(1e-9));
  CHECK(fit.c == Approx(truth.c).epsilon(1e-9));
  CHECK_THROWS_AS(fit_quadratic(std::vector<double>{1, 2}, std::vector<double>{1, 2}), InputError);
  CHECK_THROWS_AS(fit_quadratic(std::vector<double>{1, 1, 1}, std::vector<double>{1, 2, 3}), InputError);
}

TEST_CASE("the fit weighs relative error: a line through y = x, 10x, 100x scaled points", "[entrain][cost]") {
  // Points off a line by +10%, -10%, +10%, -10%: relative weights make each residual count alike,
  // so the fit stays within 10% of every point.
  const std::vector<double> x{1, 10, 100, 1000};
  const std::vector<double> y{1.1, 9.0, 110.0, 900.0};
  const Quadratic fit = fit_quadratic(x, y);
  for (std::size_t i = 0; i < x.size(); ++i) CHECK(std::abs(fit.at(x[i]) - y[i]) / y[i] < 0.2);
}

TEST_CASE("Entrain's cost model follows weft's per-layer costs at the profiled sizes", "[entrain][cost]") {
  const TrainingScenario scenario = test::load_scenario_text(test::small_vlm_scenario(""));
  const MultimodalModel model(scenario.model);
  dip::LayerCosts costs(model, scenario.shard_context(), scenario.cluster, false);
  const SampleCostModel cost_model(costs, dip::LayerPolicy::keep, 4);
  REQUIRE(cost_model.layers() == 8);
  CHECK(cost_model.worst_fit_error() < 0.5);
  // Between the profiled sizes (2,560 text tokens; 12 images of 169, 2,028 tokens) each layer's fit
  // stays within 10% of what LayerCosts prices there: the quadratic interpolates, it is not only
  // right where it was fitted.
  for (int layer = 0; layer < 8; ++layer) {
    const SampleShape shape = layer < 4 ? SampleShape{2028, 12, 0, 0} : SampleShape{2560, 0, 0, 0};
    const double priced = static_cast<double>(costs.in_stage(layer, shape).latency(dip::LayerPolicy::keep)) / 1e9;
    INFO("layer " << layer << ": fit " << cost_model.layer_time(layer, shape) << " s, priced " << priced << " s");
    CHECK(std::abs(cost_model.layer_time(layer, shape) - priced) <= 0.10 * priced);
  }
  // A sample without images gives the encoder no work; its work is its layers' times summed.
  const SampleShape text_only{900, 0, 0, 0};
  CHECK(cost_model.work(text_only).encoder == 0.0);
  double llm = 0.0;
  for (int layer = 4; layer < 8; ++layer) llm += cost_model.layer_time(layer, text_only);
  CHECK(cost_model.work(text_only).llm == Approx(llm));
  CHECK(cost_model.work({1352, 8, 0, 0}).encoder > cost_model.work({169, 1, 0, 0}).encoder);
}

}  // namespace
}  // namespace weft::entrain
