#include "simulator/planner/dflop/dflop_timeline.hpp"

#include <algorithm>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "simulator/core/json_cursor.hpp"
#include "simulator/engine/engine.hpp"
#include "simulator/planner/entrain/entrain_schedule.hpp"
#include "simulator/workload/data/data_spec.hpp"
#include "simulator/workload/training_report.hpp"
#include "simulator/workload/training_workload.hpp"
#include "tests/simulator/planner/dflop/dflop_test_support.hpp"

namespace weft::dflop {
namespace {

using test::plan_of;

struct Pass {
  TimeNs forward = 0;
  TimeNs backward = 0;
};

// The layers [first, end) at `shape`, priced here from weft's per-layer costs.
Pass layers_pass(dip::LayerCosts& costs, int first, int end, const SampleShape& shape) {
  Pass out;
  for (int layer = first; layer < end; ++layer) {
    const dip::LayerCost& cost = costs.in_stage(layer, shape);
    out.forward += cost.forward;
    out.backward += cost.latency(dip::LayerPolicy::keep) - cost.forward;
  }
  return out;
}

TrainingScenario ideal_scenario() {
  TrainingScenario scenario = test::load_scenario_text(test::small_dflop_scenario());
  scenario.options.ideal_network = true;  // transfers take no time: the schedule by hand below
  return scenario;
}

TEST_CASE("two slots through an encoder stage and an LLM stage run 1F1B", "[dflop]") {
  const TrainingScenario scenario = ideal_scenario();
  ModelCosts costs(scenario);
  const std::vector<SampleShape> samples{{512, 2, 0.0, 0.0}, {1024, 1, 0.0, 0.0}};
  const DflopPlan plan = plan_of({2, 1, 1}, {2, 1, 1}, 2);
  const TimeNs makespan = time_iteration(costs, plan, {{4}, {4}}, samples, {{0}, {1}}, 128);
  dip::LayerCosts& tp2 = costs.at_tp(2);
  const Pass e0 = layers_pass(tp2, 0, 4, {128, 2, 0.0, 0.0});
  const Pass e1 = layers_pass(tp2, 0, 4, {128, 1, 0.0, 0.0});
  const Pass l0 = layers_pass(tp2, 4, 8, {512, 0, 0.0, 0.0});
  const Pass l1 = layers_pass(tp2, 4, 8, {1024, 0, 0.0, 0.0});
  // The encoder (2 stages deep: two warm-up forwards) F0 F1 B0 B1; the LLM F0 B0 F1 B1.
  const TimeNs e_f1_end = e0.forward + e1.forward;
  const TimeNs l_b0_end = e0.forward + l0.forward + l0.backward;
  const TimeNs l_b1_end = std::max(l_b0_end, e_f1_end) + l1.forward + l1.backward;
  const TimeNs e_b0_end = std::max(e_f1_end, l_b0_end) + e0.backward;
  CHECK(makespan == std::max(e_b0_end, l_b1_end) + e1.backward);
}

TEST_CASE("with fewer LLM than encoder replicas a slot's images are spread and gathered", "[dflop]") {
  const TrainingScenario scenario = ideal_scenario();
  ModelCosts costs(scenario);
  const std::vector<SampleShape> samples{{512, 2, 0.0, 0.0}, {1024, 1, 0.0, 0.0}};
  const DflopPlan plan = plan_of({2, 1, 2}, {2, 1, 1}, 1);
  const TimeNs makespan = time_iteration(costs, plan, {{4}, {4}}, samples, {{0, 1}}, 128);
  dip::LayerCosts& tp2 = costs.at_tp(2);
  // 3 images over 2 encoder replicas: 2 and 1; the LLM waits for both.
  const Pass two = layers_pass(tp2, 0, 4, {128, 2, 0.0, 0.0});
  const Pass one = layers_pass(tp2, 0, 4, {128, 1, 0.0, 0.0});
  // The LLM's bucket packed into 1,536 tokens, each sample's attention apart.
  Pass llm = layers_pass(tp2, 4, 8, {1536, 0, 0.0, 0.0});
  for (int layer = 4; layer < 8; ++layer) {
    const dip::LayerCost& packed = tp2.in_stage(layer, {1536, 0, 0.0, 0.0});
    llm.forward -= packed.attention_forward;
    llm.backward -= packed.attention_backward;
    for (const std::int64_t tokens : {512, 1024}) {
      const dip::LayerCost& own = tp2.in_stage(layer, {tokens, 0, 0.0, 0.0});
      llm.forward += own.attention_forward;
      llm.backward += own.attention_backward;
    }
  }
  const TimeNs llm_done = std::max(two.forward, one.forward) + llm.forward + llm.backward;
  CHECK(makespan == llm_done + std::max(two.backward, one.backward));
}

TEST_CASE("with as many replicas of each component every pair runs apart", "[dflop]") {
  const TrainingScenario scenario = ideal_scenario();
  ModelCosts costs(scenario);
  const std::vector<SampleShape> samples{{512, 2, 0.0, 0.0}, {1024, 1, 0.0, 0.0}};
  const DflopPlan both = plan_of({2, 1, 2}, {2, 1, 2}, 1);
  const TimeNs together = time_iteration(costs, both, {{4}, {4}}, samples, {{0}, {1}}, 128);
  const DflopPlan single = plan_of({2, 1, 1}, {2, 1, 1}, 1);
  const TimeNs first = time_iteration(costs, single, {{4}, {4}}, samples, {{0}}, 128);
  const TimeNs second = time_iteration(costs, single, {{4}, {4}}, samples, {{1}}, 128);
  CHECK(together == std::max(first, second));
}

TEST_CASE("each stage's gradients are all-reduced over its replicas after their last backward pass", "[dflop]") {
  // Two replicas of each component, one slot each, on the scenario's network: replica g runs its
  // encoder forward, sends the projected image tokens, runs its LLM forward and backward, sends the
  // gradients back, and runs its encoder backward. Then each component's all-reduce.
  TrainingScenario scenario = test::load_scenario_text(test::small_dflop_scenario());
  const std::vector<SampleShape> samples{{512, 2, 0.0, 0.0}, {1024, 1, 0.0, 0.0}};
  const DflopPlan plan = plan_of({2, 1, 2}, {2, 1, 2}, 1);
  for (const bool overlap : {true, false}) {
    INFO("overlap_grad_reduce " << overlap);
    scenario.options.overlap_grad_reduce = overlap;
    ModelCosts costs(scenario);
    const TimeNs makespan = time_iteration(costs, plan, {{4}, {4}}, samples, {{0}, {1}}, 128);
    dip::LayerCosts& tp2 = costs.at_tp(2);
    const Bytes projected = scenario.model.sequence_tokens().per_image * scenario.model.modules.back().model.hidden * 2;
    TimeNs encoder_start = 0, encoder_end = 0, llm_start = 0, llm_end = 0;
    for (std::size_t g = 0; g < 2; ++g) {
      const Pass encoder = layers_pass(tp2, 0, 4, {128, samples[g].images, 0.0, 0.0});
      const Pass llm = layers_pass(tp2, 4, 8, {samples[g].seq_len, 0, 0.0, 0.0});
      const TimeNs sent = costs.transfer_time(2, 2, 0, 1, samples[g].images * projected / 2);
      const TimeNs llm_backward = encoder.forward + sent + llm.forward;
      llm_start = std::max(llm_start, llm_backward);
      llm_end = std::max(llm_end, llm_backward + llm.backward);
      const TimeNs encoder_backward = llm_backward + llm.backward + sent;
      encoder_start = std::max(encoder_start, encoder_backward);
      encoder_end = std::max(encoder_end, encoder_backward + encoder.backward);
    }
    // Gradients in fp32 (the stack's), of the parameters each rank trains.
    auto reduction = [&](int first, int end) {
      std::int64_t trained = 0;
      for (int layer = first; layer < end; ++layer) trained += tp2.in_stage(layer, {128, 1, 0.0, 0.0}).trained;
      return costs.gradient_reduce_time(2, 2, 0, trained * 4);
    };
    const TimeNs encoder_reduce = reduction(0, 4), llm_reduce = reduction(4, 8);
    CHECK(encoder_reduce > 0);
    CHECK(llm_reduce > 0);
    const TimeNs encoder_done = std::max(encoder_end, (overlap ? encoder_start : encoder_end) + encoder_reduce);
    const TimeNs llm_done = std::max(llm_end, (overlap ? llm_start : llm_end) + llm_reduce);
    CHECK(makespan == std::max(encoder_done, llm_done));
    if (!overlap) CHECK(makespan > encoder_end);  // the reduction shows
  }
}

TEST_CASE("a uniform layout's replica takes the time Entrain's stage model gives it", "[dflop]") {
  // Entrain's stage model (entrain_schedule.hpp) is a second implementation of the same pipeline:
  // with one sample a microbatch, packing and per-sample attention agree. What crosses between
  // stages is read differently (Entrain sends the next layer's whole input, DFLOP's runs the image
  // tokens to the LLM and 1/TP of the activations), so transfers are left out.
  const TrainingScenario scenario = ideal_scenario();
  ModelCosts costs(scenario);
  const std::vector<SampleShape> samples =
      draw_sample_shapes(*scenario.data, 0, 4, 2048, scenario.model.sequence_tokens());
  const DflopPlan plan = plan_of({2, 1, 1}, {2, 1, 1}, 4);
  const TimeNs dflop = time_iteration(costs, plan, {{4}, {4}}, samples, {{0}, {1}, {2}, {3}}, 128);
  const MultimodalModel model(scenario.model);
  ShardContext base = scenario.shard_context();
  base.micro_batch = 1;
  dip::LayerCosts layers(model, base, scenario.cluster, true, 1);
  const std::vector<entrain::SampleSet> slots{{0}, {1}, {2}, {3}};
  const entrain::ReplicaTimeline entrain = entrain::time_replica(layers, dip::LayerPolicy::keep, samples, {{4}, {4}},
                                                                 slots, slots, 128, entrain::PipelineRun{});
  CHECK(dflop == entrain.schedule.makespan);
}

TEST_CASE("a sample's observed durations are its share of the costliest stages' times", "[dflop]") {
  const TrainingScenario scenario = ideal_scenario();
  ModelCosts costs(scenario);
  DflopPlan plan = plan_of({2, 1, 2}, {2, 1, 1}, 4);
  plan.images_per_microbatch = 3.0;
  plan.tokens_per_microbatch = 1000.0;  // padded to 1,024
  const std::vector<SampleShape> samples{{512, 2, 0.0, 0.0}};
  const ItemDurations seen = observed_durations(costs, plan, {{4}, {4}}, samples, 128, std::vector<double>{0.25});
  dip::LayerCosts& tp2 = costs.at_tp(2);
  const Pass encoder = layers_pass(tp2, 0, 4, {128, 3, 0.0, 0.0});
  // 2 of 3 images, and L_dp / E_dp = 1/2 of a slot's work per bucket.
  CHECK(seen.encoder[0] == Approx(static_cast<double>(encoder.forward + encoder.backward) / 1e9 * 2.0 / 3.0 / 2.0));
  double linear = 0.0;
  double attention = 0.0;
  for (int layer = 4; layer < 8; ++layer) {
    const dip::LayerCost& packed = tp2.in_stage(layer, {1024, 0, 0.0, 0.0});
    linear += static_cast<double>(packed.latency(dip::LayerPolicy::keep) - packed.attention_forward -
                                  packed.attention_backward);
    const dip::LayerCost& own = tp2.in_stage(layer, {512, 0, 0.0, 0.0});
    attention += static_cast<double>(own.attention_forward + own.attention_backward);
  }
  CHECK(seen.llm[0] == Approx((linear / 1024.0 * 512.0 + attention) / 1e9 + 0.25));
}

// The bundled scenario `name` (DFLOP's layout of LLaVA-OV on 32 A100s: the encoder at TP1 DP4 on
// one stage, the LLM at TP2 PP2 DP7, 36 slots), simulated op by op (every transfer, collective,
// kernel gap and the optimizer step), against DFLOP's stage model of the same meshes, stages and
// slots on `samples_of(scenario)`, slot k's bucket of LLM replica g holding sample `sample_of(k, g)`.
template <class SamplesOf, class SampleOf>
void check_stage_model_agrees(const std::string& name, SamplesOf&& samples_of, SampleOf&& sample_of) {
  const JsonDocument document = JsonDocument::parse_file(WEFT_SOURCE_DIR "/scenarios/experiments/" + name + ".json");
  const TrainingScenario scenario = load_training_scenario(document.root());
  TrainingWorkload workload = build_training_workload(scenario, {});
  const SimulationResult result = simulate(workload.graph, *workload.cost_model, {});
  const double simulated = make_training_report(scenario, workload, result).iteration_time_s;

  ModelCosts costs(scenario);
  const int slots = static_cast<int>(scenario.microbatches());
  REQUIRE(slots == 36);
  const DflopPlan plan = plan_of({1, 1, 4}, {2, 2, 7}, slots);
  const std::vector<int>& layers = scenario.parallel.stage_layers;
  const StageLayers stages{{layers[0]}, {layers[1], layers[2]}};
  const std::vector<SampleShape> samples = samples_of(scenario);
  std::vector<std::vector<std::size_t>> buckets;
  for (int k = 0; k < slots; ++k) {
    for (int g = 0; g < 7; ++g) buckets.push_back({sample_of(k, g)});
  }
  const double staged = static_cast<double>(time_iteration(costs, plan, stages, samples, buckets, 128)) / 1e9;
  INFO(name << ": simulated " << simulated << " s, stage model " << staged << " s");
  CHECK(simulated == Approx(staged).epsilon(0.05));
}

TEST_CASE("the stage model and the full simulator agree on DFLOP's layout of modules on meshes of their own",
          "[dflop][meshes]") {
  SECTION("on uniform samples") {
    check_stage_model_agrees(
        "llava-ov-llama3-8b-32xa100-meshes",
        [](const TrainingScenario& s) {
          return std::vector<SampleShape>(static_cast<std::size_t>(s.training.global_batch), s.training.sample());
        },
        [](int k, int g) { return static_cast<std::size_t>(k * 7 + g); });
  }
  SECTION("on per-sample data, the encoder's 4 replicas dealing each slot's images") {
    // The samples as weft's data draws them: LLM replica g's microbatch k is sample g x 36 + k.
    check_stage_model_agrees(
        "llava-ov-llama3-8b-32xa100-meshes-data",
        [](const TrainingScenario& s) {
          return draw_sample_shapes(*s.data, 0, static_cast<std::uint64_t>(s.training.global_batch), s.training.seq_len,
                                    s.model.sequence_tokens());
        },
        [](int k, int g) { return static_cast<std::size_t>(g * 36 + k); });
  }
}

}  // namespace
}  // namespace weft::dflop
