#include <catch2/catch.hpp>

#include <string>

#include "tests/simulator/workload/training_test_support.hpp"

namespace weft {
namespace {

std::string recompute_scenario(const std::string& model, const std::string& stack, const std::string& recompute) {
  return R"({"model": )" + model + R"(, "cluster": {"base": "dgx-h100", "gpus": 8}, "stack": )" + stack +
         R"(, "parallel": {"tp": 2, "pp": 2, "dp": 2, "recompute": ")" + recompute +
         R"("}, "training": {"global_batch": 8, "seq_len": 2048}})";
}

Bytes first_stage_peak(const std::string& model, const std::string& stack, const std::string& recompute) {
  return test::run_training(test::scenario_from(recompute_scenario(model, stack, recompute)))
      .report.stages.front()
      .peak_memory;
}

const std::string kUnfusedLlama =
    R"({"base": "llama3-8b", "layers": 8, "hidden": 2048, "ffn_hidden": 7168, "heads": 16, "kv_heads": 4, )"
    R"("attention": "unfused"})";

TEST_CASE("Selective recompute drops activations only where some attention runs unfused", "[workload][recompute]") {
  // Megatron-LM of 2021 runs unfused attention (docs/stacks.md); Megatron-Core fuses it unless
  // the model asks for unfused attention; both recompute Megatron-LM's attention core.
  CHECK(test::scenario_from(recompute_scenario(test::kSmallLlama, R"("megatron-lm-2021")", "selective"))
            .selective_recompute_drops_activations());
  CHECK_FALSE(test::scenario_from(recompute_scenario(test::kSmallLlama, R"("megatron-core")", "selective"))
                  .selective_recompute_drops_activations());
  CHECK(test::scenario_from(recompute_scenario(kUnfusedLlama, R"("megatron-core")", "selective"))
            .selective_recompute_drops_activations());
  // PyTorch's per-op checkpointing keeps less than every activation whatever the attention.
  CHECK(test::scenario_from(recompute_scenario(test::kSmallLlama, R"("pytorch-eager")", "selective"))
            .selective_recompute_drops_activations());
}

TEST_CASE("Under fused attention selective recompute keeps what no recompute keeps", "[workload][recompute]") {
  // The predicate's claim, checked on the simulated peak: the same as "none" with fused attention,
  // less with unfused attention, whose softmax output selective recompute drops.
  const std::string fused = R"("megatron-core")";
  CHECK(first_stage_peak(test::kSmallLlama, fused, "selective") == first_stage_peak(test::kSmallLlama, fused, "none"));
  CHECK(first_stage_peak(kUnfusedLlama, fused, "selective") < first_stage_peak(kUnfusedLlama, fused, "none"));
}

}  // namespace
}  // namespace weft
