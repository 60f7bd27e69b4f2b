// Per-layer costs of the planner's stage model: the recompute policies by their definitions, the
// frozen rule, and activation bytes and FLOPs by hand.
#include "simulator/planner/dip/layer_costs.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <array>

#include "cost_models/cluster_cost_model.hpp"
#include "simulator/workload/modules/op_factory.hpp"

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

TEST_CASE("with TP communication overlapped a layer's forward runs its collectives beside GEMM parts",
          "[dip][stage-model]") {
  // Sequence parallelism: all-gather before the QKV and FC1 GEMMs, reduce-scatter after the
  // projection and FC2 (TP 2 inside an H800 node).
  const TrainingScenario scenario =
      test::load_scenario_text(test::small_vlm_scenario("", R"(, "sequence_parallel": true)"));
  REQUIRE(scenario.overlaps_tp_communication());
  const MultimodalModel model(scenario.model);
  LayerCosts apart(model, scenario.shard_context(), scenario.cluster, false);
  LayerCosts overlapped(model, scenario.shard_context(), scenario.cluster, false);
  overlapped.set_tp_overlap(true);
  const int layer = 6;  // a language layer
  const SampleShape text{2048, 0, 0.0, 0.0};
  const LayerCost& plain = apart.at(layer, text);
  const LayerCost& cost = overlapped.at(layer, text);
  // The hand computation: each pair's time by its pipeline, from the parts' own durations on a
  // cost model of the cluster; the other steps as they are.
  ClusterCostModel model_costs(scenario.cluster);
  const std::array<std::int64_t, 2> tp_ranks{0, 1};
  const std::uint32_t group = model_costs.add_group(make_comm_group(CommGroupKind::tp, tp_ranks, scenario.cluster));
  const DeviceSpec& gpu = scenario.cluster.gpu;
  const std::vector<Step> steps = apart.steps(layer, text);
  TimeNs expected = 0;
  int rings = 0;
  int pipelines = 0;
  for (std::size_t i = 0; i < steps.size(); ++i) {
    if (!steps[i].forward) continue;
    OpWork work = *steps[i].forward;
    if (category_of(work.op_class) == OpCategory::communication) work.comm_group = group;
    const TimeNs alone = model_costs.duration(work, gpu);
    if (work.op_class == OpClass::allgather) {
      // 2 GEMM parts of half the rows; one transfer of half the gathered bytes between them.
      const OpWork& gemm = *steps[i + 1].forward;
      const TimeNs g = model_costs.duration(
          gemm_work(gemm.shape[0] / 2, gemm.shape[1], gemm.shape[2], gemm.dtype, gemm.kernel), gpu);
      OpWork send;
      send.op_class = OpClass::send;
      send.network_bytes = work.network_bytes / 2;
      send.shape = {send.network_bytes};
      send.comm_group = group;
      expected += g + std::max(g, model_costs.duration(send, gpu));
      ++rings;
      ++i;
    } else if (i + 1 < steps.size() && steps[i + 1].forward &&
               steps[i + 1].forward->op_class == OpClass::reducescatter) {
      // 4 GEMM quarters on all but 16 SMs, 4 reduce-scatters of a quarter of the bytes.
      OpWork quarter = gemm_work(work.shape[0] / 4, work.shape[1], work.shape[2], work.dtype, work.kernel);
      quarter.reserved_sms = 16;
      OpWork scatter = *steps[i + 1].forward;
      scatter.network_bytes /= 4;
      scatter.shape = {scatter.network_bytes};
      scatter.comm_group = group;
      const TimeNs g = model_costs.duration(quarter, gpu);
      const TimeNs c = model_costs.duration(scatter, gpu);
      expected += g + c + 3 * std::max(g, c);
      ++pipelines;
      ++i;
    } else {
      expected += alone;
    }
  }
  CHECK(rings == 2);      // QKV, FC1
  CHECK(pipelines == 2);  // projection, FC2
  CHECK(cost.forward == expected);
  CHECK(cost.forward < plain.forward);
  // Recomputed forwards, the backward pass and the bytes kept are as without the overlap.
  CHECK(cost.recompute_forward == plain.forward);
  CHECK(cost.backward == plain.backward);
  CHECK(cost.saved == plain.saved);
  CHECK(cost.latency(LayerPolicy::full) == cost.forward + plain.forward + plain.backward);
  // No collective to overlap without sequence parallelism (all-reduces).
  const TrainingScenario no_sp = test::load_scenario_text(test::small_vlm_scenario(""));
  const MultimodalModel no_sp_model(no_sp.model);
  LayerCosts all_reduce(no_sp_model, no_sp.shard_context(), no_sp.cluster, false);
  const TimeNs before = all_reduce.at(layer, text).forward;
  all_reduce.set_tp_overlap(true);
  CHECK(all_reduce.at(layer, text).forward == before);
}

}  // namespace
}  // namespace weft::dip
