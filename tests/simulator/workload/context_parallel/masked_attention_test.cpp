#include "simulator/workload/context_parallel/masked_attention.hpp"

#include <catch2/catch.hpp>

#include <string>

#include "simulator/workload/modules/attention_core.hpp"
#include "tests/simulator/workload/training_test_support.hpp"

namespace weft {
namespace {

TEST_CASE("the slowest rank's share of a causal mask under zigzag and ring", "[context_parallel]") {
  // 16384 tokens: 128 row blocks of 128, block b (from 1) touching b tiles, the diagonal one
  // partial (at 1.37 full tiles); 8 ranks of 2048 queries, 16 blocks each.
  // Zigzag: every rank 1032 tiles of 128 x 128, 16 of them partial, so (1032 + 0.37 x 16) x 128^2 /
  // (2048 x 16384) of the keys per query.
  CHECK(slowest_rank_attention_share({MaskPattern::causal, TokenDistribution::zigzag}, 16384, 8) ==
        Approx((1032.0 + 0.37 * 16) / 2048.0));
  // Ring: the last rank, rows 113..128: 1928 tiles, 16 partial.
  CHECK(slowest_rank_attention_share({MaskPattern::causal, TokenDistribution::ring}, 16384, 8) ==
        Approx((1928.0 + 0.37 * 16) / 2048.0));
  // One rank: the mask's 8256 tiles of 128^2, 128 partial.
  CHECK(slowest_rank_attention_share({MaskPattern::causal, TokenDistribution::ring}, 16384, 1) ==
        Approx((8256.0 + 0.37 * 128) / 16384.0));
  // Encoder outputs embedded: fewer tiles than causal text, and LPT balances what ring does not.
  const double lpt = slowest_rank_attention_share({MaskPattern::encoder_embedded, TokenDistribution::lpt}, 16384, 8);
  CHECK(lpt < slowest_rank_attention_share({MaskPattern::encoder_embedded, TokenDistribution::ring}, 16384, 8));
  CHECK(lpt < 1032.0 / 2048.0);
}

TEST_CASE("a fused attention kernel computes the share, a causal one of a causal mask, an unfused one every score",
          "[context_parallel]") {
  ModelSpec model;
  model.hidden = 1024;
  model.heads = 8;
  model.kv_heads = 8;
  ShardContext context;
  context.seq_len = 4096;
  context.kernels.attention = Kernel::flash2;
  context.attention_share = 0.25;
  std::vector<Step> steps;
  AttentionCore("core", model, ContextParallelAlgorithm::allgather).emit(context, "", steps);
  REQUIRE(steps.size() == 1);
  // 4096 queries, 1024 keys each, 8 heads of 128.
  CHECK(steps[0].forward->flops == Approx(4.0 * 4096 * 1024 * 8 * 128));
  CHECK(steps[0].forward->shape[3] == 1024);
  CHECK(steps[0].forward->shape[5] == 0);
  CHECK(steps[0].backward->flops == Approx(2.5 * 4.0 * 4096 * 1024 * 8 * 128));
  CHECK(steps[0].model_flops == Approx(4.0 * 4096 * 4096 * 8 * 128));  // the model's FLOPs do not change
  steps.clear();
  context.causal_share = true;  // a share of the causal mask: the causal kernel given twice the keys
  AttentionCore("core", model, ContextParallelAlgorithm::allgather).emit(context, "", steps);
  CHECK(steps[0].forward->flops == Approx(4.0 * 4096 * 1024 * 8 * 128));
  CHECK(steps[0].forward->shape[3] == 2048);
  CHECK(steps[0].forward->shape[5] == 1);
  steps.clear();
  context.kernels.attention = Kernel::unfused;
  AttentionCore("core", model, ContextParallelAlgorithm::allgather).emit(context, "", steps);
  CHECK(steps[0].forward->flops == Approx(4.0 * 4096 * 4096 * 8 * 128 / 2));  // causal, as without a mask
  CHECK(steps[0].forward->shape[5] == 1);
}

// The first attention forward op's FLOPs in a training graph of `parallel` and `training` fields.
double attention_flops(const std::string& parallel, const std::string& training) {
  const test::TrainingRun run = test::run_training(
      test::scenario_from(R"({"model": )" + test::kSmallLlama + R"(, "cluster": {"base": "dgx-h100", "gpus": 8},
          "parallel": {"cp": 2, "dp": 4, "cp_algorithm": "allgather")" +
                          parallel + R"(},
          "training": {"global_batch": 8, "seq_len": 4096)" +
                          training + "}}"),
      {.composites = false});
  const Graph& graph = run.workload.graph;
  for (std::uint32_t i = 0; i < graph.op_count(); ++i) {
    const OpWork& work = graph.op_work(OpId{i});
    if (work.op_class == OpClass::attention_fwd) return work.flops;
  }
  FAIL("no attention");
  return 0.0;
}

TEST_CASE("a scenario's mask and distribution set its CP ranks' attention", "[context_parallel][workload]") {
  // 2048 queries a rank, 16 heads of 128; 32 row blocks of 128 over 2 ranks.
  const double dense = 4.0 * 2048 * 4096 * 16 * 128;
  CHECK(attention_flops("", "") == Approx(dense / 2));  // causal, evenly dealt
  // Zigzag deals rows 1-8 and 25-32 to one rank, 9-24 to the other: 264 tiles each, 16 of them
  // partial (the diagonal's, at 1.37 full tiles): (264 + 0.37 x 16) x 128^2 / 2048 = 2159.36 keys a
  // query, which the causal kernel computes as half of twice that in whole keys, 4319.
  CHECK(attention_flops(R"(, "cp_distribution": "zigzag")", "") == Approx(dense * 4319.0 / 2 / 4096.0));
  // Ring: the second rank's rows 17-32 hold 392 tiles, 16 partial: 3183.36 keys a query, 6367 / 2.
  CHECK(attention_flops(R"(, "cp_distribution": "ring")", "") == Approx(dense * 6367.0 / 2 / 4096.0));
  const double ee = attention_flops(R"(, "cp_distribution": "lpt")", R"(, "attention_mask": "ee")");
  CHECK(ee ==
        Approx(dense * slowest_rank_attention_share({MaskPattern::encoder_embedded, TokenDistribution::lpt}, 4096, 2))
            .epsilon(1e-3));
}

TEST_CASE("masks and distributions are refused where they cannot apply", "[context_parallel][errors]") {
  const std::string base = R"({"model": "llama3-8b", "cluster": {"base": "dgx-h100", "gpus": 8},
                               "parallel": {"tp": 8, "dp": 1)";
  CHECK_THROWS_WITH(test::scenario_from(base + R"(}, "training": {"global_batch": 8, "seq_len": 4096,
                                          "attention_mask": "star"}})"),
                    Catch::Contains("training.attention_mask: 'star' is not one of causal, ep, ee, document or mp"));
  CHECK_THROWS_WITH(
      test::scenario_from(base + R"(}, "training": {"global_batch": 8, "seq_len": 512, "attention_mask": "ee"}})"),
      Catch::Contains("training.attention_mask: a mask is drawn over sequences of 1024 tokens or more"));
  // Whole tiles of 128, at least two per CP rank.
  CHECK_THROWS_WITH(test::scenario_from(R"({"model": "llama3-8b", "cluster": {"base": "dgx-h100", "gpus": 8},
                                            "parallel": {"cp": 8, "dp": 1, "cp_distribution": "zigzag"},
                                            "training": {"global_batch": 8, "seq_len": 1024}})"),
                    Catch::Contains("parallel.cp_distribution: a mask's tokens are dealt in tiles of 128, at least 2 "
                                    "per CP rank: training.seq_len must be a multiple of 128 from 2048 to 262144, not "
                                    "1024"));
  CHECK_THROWS_WITH(test::scenario_from(base + R"(}, "training": {"global_batch": 8, "seq_len": 4000,
                                          "attention_mask": "ee"}})"),
                    Catch::Contains("training.attention_mask: a mask's tokens are dealt in tiles of 128"));
  CHECK_THROWS_WITH(
      test::scenario_from(base + R"(, "cp_distribution": "best"}, "training": {"global_batch": 8, "seq_len": 4096}})"),
      Catch::Contains("parallel.cp_distribution: 'best' is not one of lpt, random, ring or zigzag"));
  CHECK_THROWS_WITH(test::scenario_from(R"({"model": "vlm-s", "cluster": {"base": "dgx-h100", "gpus": 8},
                                            "parallel": {"tp": 8, "dp": 1},
                                            "training": {"global_batch": 8, "seq_len": 4096, "images": 1,
                                                         "attention_mask": "ep"}})"),
                    Catch::Contains("training.attention_mask: the attention mask of a model of several modules"));
}

}  // namespace
}  // namespace weft
