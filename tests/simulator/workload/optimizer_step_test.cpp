#include "simulator/workload/optimizer_step.hpp"

#include <catch2/catch.hpp>

#include <string>
#include <utility>
#include <vector>

#include "tests/simulator/workload/training_test_support.hpp"

namespace weft {
namespace {

// Each kernel's name and bytes moved.
std::vector<std::pair<std::string, Bytes>> traffic(const std::vector<OptimizerKernel>& kernels) {
  std::vector<std::pair<std::string, Bytes>> out;
  for (const OptimizerKernel& kernel : kernels) {
    CHECK(kernel.work.op_class == OpClass::optimizer);
    out.emplace_back(std::string(kernel.name), kernel.work.memory_bytes);
  }
  return out;
}

SoftwareStack stack_of(OptimizerStepKernels kernels, Bytes bf16_gradients, Bytes fp16_gradients) {
  SoftwareStack stack;
  stack.optimizer_step = kernels;
  stack.bf16_gradient_bytes = bf16_gradients;
  stack.fp16_gradient_bytes = fp16_gradients;
  return stack;
}

TEST_CASE("an optimizer step runs the kernels of its stack's optimizer", "[workload][stack][optimizer]") {
  // A rank updating 1,000 parameters of the 8,000 it holds gradients for (ZeRO over 8).
  const OptimizerStepSize size{1000, 8000 * 4};
  using Traffic = std::vector<std::pair<std::string, Bytes>>;
  SECTION("Megatron, bf16 with fp32 gradients: norm, Adam, copy back to bf16, zero the buffer") {
    const auto kernels = optimizer_step_kernels(stack_of(OptimizerStepKernels::megatron, 4, 2), Dtype::bf16, size);
    // Norm reads 4 B; Adam reads parameter, gradient and two moments (16 B) and writes three
    // (12 B); the copy reads 4 and writes 2; zeroing writes the 32,000 B gradient buffer.
    CHECK(traffic(kernels) == Traffic{{"gradient norm", 4'000},
                                      {"optimizer step", 28'000},
                                      {"copy parameters", 6'000},
                                      {"zero gradients", 32'000}});
    CHECK(kernels[1].work.kernel == Kernel::adamw_fused);
  }
  SECTION("Megatron, fp16 with fp16 gradients: cast to fp32 and unscale first") {
    const auto kernels =
        optimizer_step_kernels(stack_of(OptimizerStepKernels::megatron, 4, 2), Dtype::fp16, {1000, 8000 * 2});
    CHECK(traffic(kernels) == Traffic{{"copy gradients to fp32", 6'000},
                                      {"unscale gradients", 8'000},
                                      {"gradient norm", 4'000},
                                      {"optimizer step", 28'000},
                                      {"copy parameters", 6'000},
                                      {"zero gradients", 16'000}});
  }
  SECTION("Megatron, tf32: the fp32 parameters are the master copy, nothing to cast or copy back") {
    const auto kernels =
        optimizer_step_kernels(stack_of(OptimizerStepKernels::megatron, 4, 2), Dtype::tf32, {1000, 8000 * 4});
    CHECK(traffic(kernels) ==
          Traffic{{"gradient norm", 4'000}, {"optimizer step", 28'000}, {"zero gradients", 32'000}});
  }
  SECTION("PyTorch: clip_grad_norm_ reads the gradients and scales them, then AdamW") {
    const auto kernels = optimizer_step_kernels(stack_of(OptimizerStepKernels::pytorch, 4, 4), Dtype::bf16, size);
    CHECK(traffic(kernels) == Traffic{{"gradient norm", 4'000}, {"clip gradients", 8'000}, {"optimizer step", 28'000}});
  }
}

TEST_CASE("the simulated optimizer step is its kernels in a row on the compute stream", "[workload][optimizer]") {
  // Small Llama on 8 H100, TP2 DP4, the distributed optimizer: the update runs over a quarter of
  // the rank's parameters, the buffer zeroed is all of its fp32 gradients.
  const TrainingScenario scenario =
      test::scenario_from(R"({"model": )" + test::kSmallLlama +
                          R"(, "cluster": {"base": "dgx-h100", "gpus": 8}, "parallel": {"tp": 2, "dp": 4, "zero": 1},
          "training": {"global_batch": 8, "seq_len": 1024}})");
  const test::TrainingRun run = test::run_training(scenario);
  const Graph& graph = run.workload.graph;
  const std::int64_t parameters = run.workload.ranks[0].parameters;
  std::vector<std::pair<std::string, Bytes>> step;
  TimeNs previous_end = 0;
  for (std::size_t i = 0; i < graph.op_count(); ++i) {
    const OpId op(static_cast<OpId::value_type>(i));
    if (graph.op_work(op).op_class != OpClass::optimizer) continue;
    step.emplace_back(graph.display_name(op), graph.op_work(op).memory_bytes);
    CHECK(run.result.start(op) >= previous_end);
    previous_end = run.result.end(op);
  }
  const std::int64_t shard = parameters / 4;
  CHECK(step == std::vector<std::pair<std::string, Bytes>>{{"gradient norm", 4 * shard},
                                                           {"optimizer step", 28 * shard},
                                                           {"copy parameters", 6 * shard},
                                                           {"zero gradients", 4 * parameters}});
}

TEST_CASE("a stack's optimizer_step must be a known implementation", "[workload][stack][errors]") {
  CHECK_THROWS_WITH(test::scenario_from(R"({"model": )" + test::kSmallLlama +
                                        R"(, "cluster": {"base": "dgx-h100", "gpus": 8},
                                        "stack": {"base": "pytorch-eager", "optimizer_step": "lion"},
                                        "parallel": {"tp": 2, "dp": 4}, "training": {"global_batch": 8, "seq_len": 1024}})"),
                    Catch::Contains("stack.optimizer_step: 'lion' is not one of megatron or pytorch"));
}

}  // namespace
}  // namespace weft
