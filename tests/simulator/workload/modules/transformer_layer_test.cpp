#include <catch2/catch.hpp>

#include <map>
#include <string>
#include <vector>

#include "simulator/workload/model.hpp"
#include "tests/simulator/workload/training_test_support.hpp"

namespace weft {
namespace {

// A layer's steps by their last name part ("qkv", "core", "fc2", ...).
std::map<std::string, Step> layer_steps_by_name(const TrainingScenario& scenario) {
  const Model model(scenario.model.single(), scenario.parallel.cp_algorithm);
  std::map<std::string, Step> by_name;
  for (Step& step : model.layer_steps(scenario.shard_context(), 1)) {
    by_name[step.name.substr(step.name.rfind('.') + 1)] = std::move(step);
  }
  return by_name;
}

TEST_CASE("Per-op checkpointing keeps attention's output and every other matmul's, counted in forward order",
          "[workload][recompute]") {
  // torchtitan's Llama runs wq, wk, wv, wo, w1, w3, w2 in that order and keeps the outputs of the
  // 1st, 3rd, 5th and 7th (Q, V, W1 and W2) and of SDPA (with its log-sum-exp); it runs K, WO and
  // W3 again. The small Llama: hidden 2048, 16 heads of 128, 4 KV heads (512 wide), FFN 7168.
  const int tp = GENERATE(1, 2);
  const TrainingScenario scenario = test::scenario_from(
      R"({"model": )" + test::kSmallLlama +
      R"(, "cluster": {"base": "dgx-h100", "gpus": 8}, "stack": "pytorch-eager", "parallel": {"tp": )" +
      std::to_string(tp) + R"(, "dp": )" + std::to_string(8 / tp) +
      R"(, "recompute": "selective"}, "training": {"global_batch": 8, "seq_len": 2048}})");
  const auto steps = layer_steps_by_name(scenario);
  const std::int64_t tokens = 2048;  // micro-batch 1
  const Bytes bf16 = 2;
  INFO("tp " << tp);
  const Step& qkv = steps.at("qkv");
  CHECK(qkv.op_checkpoint_bytes == tokens * (2048 + 512) / tp * bf16);
  CHECK(qkv.op_recompute_share == Approx(512.0 / (2048 + 2 * 512)));
  REQUIRE(qkv.op_recompute);
  CHECK(qkv.op_recompute->flops == Approx(2.0 * tokens * (512 / tp) * 2048));  // the K columns
  const Step& core = steps.at("core");
  CHECK(core.op_checkpoint_bytes == tokens * 2048 / tp * bf16 + tokens * (16 / tp) * 4);
  CHECK(core.op_recompute_share == 0.0);
  CHECK(steps.at("proj").op_checkpoint_bytes == 0);
  CHECK(steps.at("proj").op_recompute_share == 1.0);
  const Step& fc1 = steps.at("fc1");
  CHECK(fc1.op_checkpoint_bytes == tokens * 7168 / tp * bf16);
  CHECK(fc1.op_recompute_share == Approx(0.5));
  REQUIRE(fc1.op_recompute);
  CHECK(fc1.op_recompute->flops == Approx(2.0 * tokens * (7168 / tp) * 2048));  // W3
  const Step& fc2 = steps.at("fc2");
  CHECK(fc2.op_checkpoint_bytes == tokens * 2048 * bf16);  // row-parallel: the whole output, before the reduction
  CHECK(fc2.op_recompute_share == 0.0);
  CHECK_FALSE(fc2.op_recompute);
  for (const char* recomputed : {"attn_norm", "rope", "swiglu", "mlp_norm", "attn_residual", "mlp_residual"}) {
    INFO(recomputed);
    CHECK(steps.at(recomputed).op_checkpoint_bytes == 0);
    CHECK(steps.at(recomputed).op_recompute_share == 1.0);
  }
}

TEST_CASE("A GPT layer's matmuls under per-op checkpointing: Q, V and FC1 kept", "[workload][recompute]") {
  // Without a gated MLP the layer runs six matmuls: wq, wk, wv, wo, fc1, fc2; FC2 is the 6th.
  const TrainingScenario scenario =
      test::scenario_from(R"({"model": {"base": "gpt3-1.3b", "layers": 4}, "cluster": {"base": "dgx-h100", "gpus": 8},)"
                          R"( "stack": "pytorch-eager", "parallel": {"dp": 8, "recompute": "selective"},)"
                          R"( "training": {"global_batch": 8, "seq_len": 2048}})");
  const auto steps = layer_steps_by_name(scenario);
  const std::int64_t hidden = 2048;
  CHECK(steps.at("qkv").op_checkpoint_bytes == 2048 * 2 * hidden * 2);  // Q and V, MHA
  CHECK(steps.at("fc1").op_checkpoint_bytes == 2048 * 4 * hidden * 2);
  CHECK(steps.at("fc1").op_recompute_share == 0.0);
  CHECK(steps.at("fc2").op_checkpoint_bytes == 0);
  CHECK(steps.at("fc2").op_recompute_share == 1.0);
}

}  // namespace
}  // namespace weft
