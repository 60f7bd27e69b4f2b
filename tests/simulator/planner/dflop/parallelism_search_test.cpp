#include "simulator/planner/dflop/parallelism_search.hpp"

#include <catch2/catch.hpp>

namespace weft::dflop {
namespace {

ComponentProfile component(int tp, int layers, double rate, double attention_rate, double activations, double state_one,
                           double state_all) {
  ComponentProfile p;
  p.tp = tp;
  p.layers = layers;
  p.throughput = PiecewiseLinear({1.0}, {rate});
  if (attention_rate > 0.0) p.attention_throughput = PiecewiseLinear({1.0}, {attention_rate});
  p.activations_per_unit = PiecewiseLinear({1.0}, {activations});
  p.model_state = PiecewiseLinear({1.0, static_cast<double>(layers)}, {state_one, state_all});
  return p;
}

// A model of round numbers: a 4-layer encoder at 100 (TP 1) or 80 (TP 2) TFLOP/s per GPU, an
// 8-layer LLM whose linear layers run at 200 or 160 and attention at 100 or 80; 1 TFLOP an image,
// 10 GFLOP a token, 1e5 x s^2 of attention.
ModelProfile round_profile() {
  ModelProfile p;
  p.encoder = {component(1, 4, 100e12, 0.0, 1e6, 1e9, 4e9), component(2, 4, 80e12, 0.0, 1e6, 1e9, 4e9)};
  p.llm = {component(1, 8, 200e12, 100e12, 1e5, 2e9, 16e9), component(2, 8, 160e12, 80e12, 1e5, 2e9, 16e9)};
  p.flops = {1e12, 1e10, 1e5};
  return p;
}

// Two samples: 2 images and 1,000 tokens, 4 images and 3,000 tokens (means 3 and 2,000).
DatasetProfile round_data() { return profile_dataset({{1000, 2, 0.0, 0.0}, {3000, 4, 0.0, 0.0}}); }

TEST_CASE("a DFLOP plan's expected makespan and memory follow Algorithm 1 and Eqs. 4-5", "[dflop]") {
  const SearchSpace space{6, 8, Bytes{80} << 30, false};
  const auto plan = evaluate_plan(round_profile(), round_data(), space, {1, 2, 1}, {2, 2, 1}, 2);
  REQUIRE(plan);
  // 2 buckets of 4 samples: 12 images an encoder slot, 8,000 tokens an LLM bucket.
  CHECK(plan->images_per_microbatch == Approx(12.0));
  CHECK(plan->tokens_per_microbatch == Approx(8000.0));
  // E_dur: 12 TFLOP over 100 TFLOP/s, half the layers on the costliest stage.
  CHECK(plan->encoder_stage_s == Approx(0.06));
  // L_dur: per sample 20 TFLOP of linear layers on 2 GPUs at 160 (0.0625 s) and a mean attention
  // of (0.1 + 0.9) / 2 TFLOP on 2 GPUs at 80 (0.003125 s); 4 samples, half the layers.
  CHECK(plan->llm_stage_s == Approx(4 * (0.0625 + 0.003125) / 2));
  // T = (N_mb + E_pp + L_pp - 1) x max(E_dur, L_dur)
  CHECK(plan->expected_makespan_s == Approx(5 * 0.13125));
  // Eq. 4: 2 layers' state (2 GB) and 4 stages' activations of 2 layers x 12 images x 1 MB.
  CHECK(plan->encoder_memory == Bytes{2'000'000'000} + 4 * Bytes{24'000'000});
  // Eq. 5: 4 layers' state (2 + 3/7 x 14 GB) and 2 stages' of 4 layers x 8,000 tokens x 100 kB.
  CHECK(plan->llm_memory == Bytes{8'000'000'000} + 2 * Bytes{3'200'000'000});
  CHECK_FALSE(evaluate_plan(round_profile(), round_data(), space, {4, 1, 1}, {2, 2, 1}, 2));  // no TP 4 profile
}

TEST_CASE("a bucket holds whole samples and the costliest stage its whole layers", "[dflop]") {
  const SearchSpace space{6, 8, Bytes{80} << 30, false};
  // 3 buckets of 8 samples: the fullest holds 3; 8 LLM layers on 3 stages: the costliest holds 3.
  const auto plan = evaluate_plan(round_profile(), round_data(), space, {1, 1, 1}, {1, 3, 1}, 3);
  REQUIRE(plan);
  CHECK(plan->tokens_per_microbatch == Approx(6000.0));
  const double per_sample = 2e13 / 200e12 + 0.5e12 / 100e12;
  CHECK(plan->llm_stage_s == Approx(3 * per_sample * 3.0 / 8.0));
}

TEST_CASE("Algorithm 1 finds the least expected makespan that fits, over every layout", "[dflop]") {
  const ModelProfile profile = round_profile();
  const DatasetProfile data = round_data();
  for (const Bytes memory : {Bytes{80} << 30, Bytes{9'000'000'000}, Bytes{5'000'000'000}}) {
    const SearchSpace space{6, 8, memory, false};
    const SearchResult result = find_parallelism(profile, data, space);
    // Every split of 6 GPUs, TP 1 or 2 dividing each side, PP dividing the rest (at most the
    // layers), every N_mb up to GBS / L_dp, through evaluate_plan.
    double best = 1e300;
    std::int64_t fitting = 0;
    for (int encoder_gpus = 1; encoder_gpus < 6; ++encoder_gpus) {
      for (int e_tp : {1, 2}) {
        for (int e_pp = 1; e_pp <= 4; ++e_pp) {
          if (encoder_gpus % (e_tp * e_pp) != 0) continue;
          for (int l_tp : {1, 2}) {
            for (int l_pp = 1; l_pp <= 8; ++l_pp) {
              if ((6 - encoder_gpus) % (l_tp * l_pp) != 0) continue;
              const ModuleLayout e{e_tp, e_pp, encoder_gpus / (e_tp * e_pp)};
              const ModuleLayout l{l_tp, l_pp, (6 - encoder_gpus) / (l_tp * l_pp)};
              for (int i = 1; i <= 8 / l.dp; ++i) {
                const auto plan = evaluate_plan(profile, data, space, e, l, i);
                if (plan->encoder_memory > memory || plan->llm_memory > memory) continue;
                ++fitting;
                best = std::min(best, plan->expected_makespan_s);
              }
            }
          }
        }
      }
    }
    INFO("memory " << memory);
    CHECK(result.fitting == fitting);
    if (fitting == 0) {
      CHECK_FALSE(result.best);
      continue;
    }
    REQUIRE(result.best);
    CHECK(result.best->expected_makespan_s == best);
    CHECK(result.best->encoder.gpus() + result.best->llm.gpus() == 6);
    CHECK(result.best->encoder_memory <= memory);
    CHECK(result.best->llm_memory <= memory);
  }
}

TEST_CASE("the baselines' search keeps one TP and one DP for both components", "[dflop]") {
  const SearchSpace uniform{8, 8, Bytes{80} << 30, true};
  const SearchResult result = find_parallelism(round_profile(), round_data(), uniform);
  REQUIRE(result.best);
  CHECK(result.best->encoder.tp == result.best->llm.tp);
  CHECK(result.best->encoder.dp == result.best->llm.dp);
  CHECK(result.best->encoder.gpus() + result.best->llm.gpus() == 8);
  // Its space is part of DFLOP's: DFLOP's best is no worse.
  const SearchResult free = find_parallelism(round_profile(), round_data(), {8, 8, Bytes{80} << 30, false});
  REQUIRE(free.best);
  CHECK(free.best->expected_makespan_s <= result.best->expected_makespan_s);
  CHECK(free.candidates > result.candidates);
}

TEST_CASE("each sample's durations add up to the plan's stage times over a bucket of the mean", "[dflop]") {
  const SearchSpace space{6, 8, Bytes{80} << 30, false};
  const auto plan = evaluate_plan(round_profile(), round_data(), space, {1, 2, 1}, {2, 2, 1}, 2);
  REQUIRE(plan);
  const std::vector<SampleShape> bucket{
      {1000, 2, 0.0, 0.0}, {3000, 4, 0.0, 0.0}, {1000, 2, 0.0, 0.0}, {3000, 4, 0.0, 0.0}};
  const ItemDurations durations = item_durations(round_profile(), *plan, bucket);
  double encoder = 0.0;
  double llm = 0.0;
  for (std::size_t i = 0; i < bucket.size(); ++i) {
    encoder += durations.encoder[i];
    llm += durations.llm[i];
  }
  CHECK(encoder == Approx(plan->encoder_stage_s));
  CHECK(llm == Approx(plan->llm_stage_s));
  // The second sample by hand: 4 TFLOP over 100 on half the layers; 30 TFLOP over 2 x 160 and
  // 0.9 over 2 x 80, on half the layers.
  CHECK(durations.encoder[1] == Approx(0.02));
  CHECK(durations.llm[1] == Approx((0.09375 + 0.005625) / 2));
}

TEST_CASE("with more encoder than LLM replicas an encoder sample's share is a slot's over E_dp", "[dflop]") {
  const SearchSpace space{6, 8, Bytes{80} << 30, false};
  const auto plan = evaluate_plan(round_profile(), round_data(), space, {1, 1, 4}, {1, 1, 2}, 2);
  REQUIRE(plan);
  // 4 buckets of 2 samples; a slot's 2 buckets (4 samples, 12 images) over 4 encoder replicas.
  CHECK(plan->images_per_microbatch == Approx(3.0));
  const std::vector<SampleShape> one{{1000, 2, 0.0, 0.0}};
  CHECK(item_durations(round_profile(), *plan, one).encoder[0] == Approx(2e12 / 100e12 * 2.0 / 4.0));
}

}  // namespace
}  // namespace weft::dflop
