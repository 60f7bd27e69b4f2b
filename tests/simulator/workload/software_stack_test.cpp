#include <catch2/catch.hpp>

#include <algorithm>
#include <string>
#include <vector>

#include "simulator/workload/model.hpp"
#include "tests/simulator/workload/training_test_support.hpp"

namespace weft {
namespace {

using test::kSmallLlama;
using test::scenario_from;

std::string scenario_with(const std::string& stack, const std::string& gpu = "h100-sxm",
                          const std::string& options = "") {
  return R"({"model": )" + kSmallLlama + R"(, "cluster": {"base": "dgx-h100", "gpu": ")" + gpu + R"(", "gpus": 8}, )" +
         (stack.empty() ? "" : R"("stack": )" + stack + ", ") +
         R"("parallel": {"tp": 2, "dp": 4, "zero": 1}, "training": {"global_batch": 8, "seq_len": 1024})" +
         (options.empty() ? "" : R"(, "options": )" + options) + "}";
}

// `scenario` (of scenario_with) training in `dtype`.
std::string with_dtype(std::string scenario, const std::string& dtype) {
  const std::string end = R"("seq_len": 1024})";
  return scenario.replace(scenario.find(end), end.size(), R"("seq_len": 1024, "dtype": ")" + dtype + R"("})");
}

// The kernels of one transformer layer's forward steps, as the scenario's stack runs them.
std::vector<Step> layer_steps(const TrainingScenario& scenario) {
  const Model model(scenario.model.single());
  return model.layer_steps(scenario.shard_context(), 0);
}

const Step& step_named(const std::vector<Step>& steps, const std::string& suffix) {
  const auto found = std::find_if(steps.begin(), steps.end(), [&](const Step& s) {
    return s.name.size() >= suffix.size() && s.name.compare(s.name.size() - suffix.size(), suffix.size(), suffix) == 0;
  });
  REQUIRE(found != steps.end());
  return *found;
}

TEST_CASE("a stack chooses the attention kernel per GPU architecture and the SwiGLU fusion", "[workload][stack]") {
  // Megatron-Core (the default): cuDNN attention on Hopper, FlashAttention-2 before; SwiGLU fused.
  const TrainingScenario hopper = scenario_from(scenario_with(""));
  CHECK(hopper.stack.name == "megatron-core");
  CHECK(hopper.shard_context().kernels.attention == Kernel::cudnn);
  const TrainingScenario ampere = scenario_from(scenario_with("", "a100-sxm-80gb"));
  CHECK(ampere.shard_context().kernels.attention == Kernel::flash2);
  const auto megatron = layer_steps(hopper);
  CHECK(step_named(megatron, "attn.core").forward->kernel == Kernel::cudnn);
  CHECK(step_named(megatron, "attn.core").backward->kernel == Kernel::cudnn);
  CHECK(step_named(megatron, "mlp.swiglu").forward->kernel == Kernel::swiglu_fwd);
  CHECK(step_named(megatron, "attn.qkv").forward->kernel == Kernel::nt);
  CHECK(step_named(megatron, "attn.qkv").backward->kernel == Kernel::nn);
  CHECK(step_named(megatron, "attn.qkv").weight_grad->kernel == Kernel::tn);
  CHECK(step_named(megatron, "attn_norm").forward->kernel == Kernel::rmsnorm_fwd);
  CHECK(step_named(megatron, "attn_norm").backward->kernel == Kernel::rmsnorm_bwd);
  CHECK(step_named(megatron, "mlp_residual").forward->kernel == Kernel::add);

  // Plain PyTorch: SwiGLU as SiLU and a product, the same traffic counted for the fused op.
  const auto eager = layer_steps(scenario_from(scenario_with(R"("pytorch-eager")")));
  const OpWork& swiglu = *step_named(eager, "mlp.swiglu").forward;
  CHECK(swiglu.kernel == Kernel::swiglu_unfused_fwd);
  CHECK(swiglu.memory_bytes == step_named(megatron, "mlp.swiglu").forward->memory_bytes);
}

TEST_CASE("unfused attention keeps its scores for the backward pass", "[workload][stack]") {
  const auto fused = layer_steps(scenario_from(scenario_with("")));
  const auto unfused = layer_steps(scenario_from(scenario_with(R"("megatron-lm-2021")")));
  const Step& flash = step_named(fused, "attn.core");
  const Step& scores = step_named(unfused, "attn.core");
  CHECK(scores.forward->kernel == Kernel::unfused);
  // 8 heads per TP rank x 1024 x 1024 scores of 2 bytes (softmax output; the model has no dropout),
  // where fused attention keeps a 4-byte log-sum-exp per query and head instead.
  CHECK(scores.recomputable_bytes == 8 * 1024 * 1024 * 2);
  CHECK(scores.saved_bytes - flash.saved_bytes == 8 * 1024 * 1024 * 2 - 8 * 1024 * 4);
}

TEST_CASE("a stack sets whether gradient reduction overlaps the backward pass, a scenario may say otherwise",
          "[workload][stack]") {
  CHECK(scenario_from(scenario_with("")).options.overlap_grad_reduce);
  const TrainingScenario old = scenario_from(scenario_with(R"("megatron-lm-2021")"));
  CHECK_FALSE(old.options.overlap_grad_reduce);
  CHECK_FALSE(old.options.overlap_param_gather);
  const TrainingScenario told =
      scenario_from(scenario_with(R"("megatron-lm-2021")", "h100-sxm", R"({"overlap_grad_reduce": true})"));
  CHECK(told.options.overlap_grad_reduce);
  CHECK_FALSE(told.options.overlap_param_gather);
}

TEST_CASE("a stack's gradients: fp32 for bf16 training, DeepSpeed's bf16 copies besides", "[workload][stack]") {
  const auto megatron = test::run_training(scenario_from(scenario_with("")));
  const auto deepspeed = test::run_training(scenario_from(scenario_with(R"("megatron-deepspeed")")));
  const StaticMemory& fp32 = megatron.report.stages[0].static_memory;
  const StaticMemory& both = deepspeed.report.stages[0].static_memory;
  // bf16 parameters of 2 bytes; fp32 gradients of 4 (Megatron-LM), 4 + 2 (DeepSpeed's BF16 optimizer).
  CHECK(fp32.gradients == 2 * fp32.parameters);
  CHECK(both.gradients == 3 * both.parameters);
}

TEST_CASE("a stack's CUDA context is each GPU's framework overhead unless the scenario gives its own",
          "[workload][stack]") {
  // 2021-22 stacks: BigScience's 1,573 MiB; lazy module loading: 287,047,680 bytes (273.75 MiB).
  const TrainingScenario eager = scenario_from(scenario_with(R"("megatron-deepspeed")"));
  CHECK(eager.options.framework_overhead == Bytes{1573} * 1024 * 1024);
  const TrainingScenario lazy = scenario_from(scenario_with(""));
  CHECK(lazy.options.framework_overhead == Bytes{287047680});
  const TrainingScenario inline_stack = scenario_from(scenario_with(R"({"attention": "cudnn"})"));
  CHECK(inline_stack.options.framework_overhead == 0);
  const TrainingScenario told = scenario_from(scenario_with("", "h100-sxm", R"({"framework_overhead_GiB": 2})"));
  CHECK(told.options.framework_overhead == Bytes{2} << 30);

  // Every stage holds it besides its parameters, gradients and optimizer states, and its peak
  // grows by exactly that much.
  const auto with_context = test::run_training(lazy);
  const auto without =
      test::run_training(scenario_from(scenario_with("", "h100-sxm", R"({"framework_overhead_GiB": 0})")));
  const StageReport& stage = with_context.report.stages[0];
  CHECK(stage.static_memory.framework_overhead == Bytes{287047680});
  CHECK(stage.peak_memory - without.report.stages[0].peak_memory == Bytes{287047680});
}

TEST_CASE("PyTorch's stacks keep fp32 parameters that are the optimizer's master copy", "[workload][stack]") {
  // TP2 DP4 ZeRO-1: the optimizer's states are sharded over the 4 replicas.
  const auto megatron = test::run_training(scenario_from(scenario_with("")));
  const auto eager = test::run_training(scenario_from(scenario_with(R"("pytorch-eager")")));
  const std::int64_t parameters = megatron.workload.ranks[0].parameters;
  REQUIRE(eager.workload.ranks[0].parameters == parameters);
  const StaticMemory& separate = megatron.report.stages[0].static_memory;
  const StaticMemory& master = eager.report.stages[0].static_memory;
  // Megatron: bf16 parameters (2 B), fp32 main copy and two moments in the optimizer (12 B).
  CHECK(separate.parameters == 2 * parameters);
  CHECK(separate.optimizer_states == 12 * parameters / 4);
  // PyTorch: fp32 parameters (4 B) are the master copy; the optimizer adds the two moments (8 B).
  CHECK(master.parameters == 4 * parameters);
  CHECK(master.optimizer_states == 8 * parameters / 4);
}

TEST_CASE("training in tf32 keeps fp32 parameters, gradients and gathers on every stack", "[workload][stack]") {
  // TP2 DP4 ZeRO-1 on A40s, whose TF32 tensor cores run at half their bf16 rate.
  auto tf32 = [](const std::string& stack) {
    return test::run_training(scenario_from(with_dtype(scenario_with(stack, "a40"), "tf32")));
  };
  const auto bf16 =
      test::run_training(scenario_from(scenario_with(R"({"base": "megatron-core", "attention": "unfused"})", "a40")));
  const std::int64_t parameters = bf16.workload.ranks[0].parameters;
  for (const std::string stack :
       {R"({"base": "megatron-core", "attention": "unfused"})",
        R"({"base": "pytorch-eager", "attention": "efficient"})", R"("megatron-deepspeed")"}) {
    INFO(stack);
    const auto run = tf32(stack);
    REQUIRE(run.workload.ranks[0].parameters == parameters);
    const StaticMemory& memory = run.report.stages[0].static_memory;
    // fp32 parameters (4 B) are the master copy: two fp32 moments (8 B) over the 4 replicas, fp32
    // gradients (4 B) and no 16-bit copy of them (DeepSpeed keeps one in bf16 training only).
    CHECK(memory.parameters == 4 * parameters);
    CHECK(memory.optimizer_states == 8 * parameters / 4);
    CHECK(memory.gradients == 4 * parameters);
    CHECK(run.report.peak_tflops == Approx(74.8));
  }
  // Megatron's bf16 run keeps 2-byte parameters beside the optimizer's 12 bytes.
  const StaticMemory& mixed = bf16.report.stages[0].static_memory;
  CHECK(mixed.parameters == 2 * parameters);
  CHECK(mixed.optimizer_states == 12 * parameters / 4);
}

TEST_CASE("fused attention refuses to train in tf32, naming the stack and the GPU", "[workload][stack][errors]") {
  auto tf32 = [](const std::string& stack, const std::string& gpu) {
    return with_dtype(scenario_with(stack, gpu), "tf32");
  };
  CHECK_THROWS_WITH(scenario_from(tf32("", "h100-sxm")),
                    Catch::Contains("training.dtype: stack 'megatron-core' runs cudnn attention on h100-sxm, which "
                                    "takes fp16 or bf16 only; training in tf32 needs a stack whose attention is "
                                    "unfused or efficient"));
  CHECK_THROWS_WITH(scenario_from(tf32(R"("pytorch-eager")", "a40")),
                    Catch::Contains("training.dtype: stack 'pytorch-eager' runs flash2 attention on a40"));
  CHECK_THROWS_WITH(scenario_from(with_dtype(scenario_with(""), "fp8")),
                    Catch::Contains("training.dtype: expected bf16 or fp16 (mixed precision) or "
                                    "tf32 (fp32 training on TF32 tensor cores)"));
}

TEST_CASE("bad stacks are rejected with their JSON path", "[workload][stack][errors]") {
  CHECK_THROWS_WITH(
      scenario_from(scenario_with(R"("megatron-9")")),
      Catch::Contains(
          "stack: unknown software stack 'megatron-9' (known: huggingface-eager, llm-foundry, megatron-core, "));
  // Found by the spec fuzz harness: a name longer than a file name may be was an internal error.
  const std::string long_name(1000, 'w');
  CHECK_THROWS_WITH(scenario_from(scenario_with("\"" + long_name + "\"")),
                    Catch::Contains("stack: unknown software stack '" + long_name + "'"));
  CHECK_THROWS_WITH(scenario_from(scenario_with(R"({"attention": "nt"})")),
                    Catch::Contains("stack.attention: 'nt' is not a kernel of attention_fwd ops (expected one of any, "
                                    "cudnn, flash2, flash3, efficient, unfused)"));
  CHECK_THROWS_WITH(scenario_from(scenario_with(R"({"attention": {"sm90": "cudnn"}})")),
                    Catch::Contains("stack.attention: expected a \"default\" kernel for other architectures"));
  CHECK_THROWS_WITH(scenario_from(scenario_with(R"({"base": "megatron-core", "swiglu": "maybe"})")),
                    Catch::Contains("stack.swiglu: expected \"fused\" or \"unfused\""));
  CHECK_THROWS_WITH(scenario_from(scenario_with(R"({"attention": "cudnn", "fusion": true})")),
                    Catch::Contains("stack.fusion: unknown field"));
  CHECK_THROWS_WITH(scenario_from(scenario_with(R"({"attention": "cudnn", "gradient_bytes": {"bf16": 3}})")),
                    Catch::Contains("stack.gradient_bytes.bf16: expected 2 (16-bit gradients) or 4 (fp32)"));
  CHECK_THROWS_WITH(scenario_from(scenario_with(R"({"attention": "cudnn", "gradient_bytes": {"fp8": 1}})")),
                    Catch::Contains("stack.gradient_bytes.fp8: unknown field"));
  CHECK_THROWS_WITH(scenario_from(scenario_with(R"({"attention": "cudnn", "fp32_parameters": "yes"})")),
                    Catch::Contains("stack.fp32_parameters: expected true or false, got a string"));
  CHECK_THROWS_WITH(scenario_from(scenario_with(R"({"attention": "cudnn", "cuda_context_MiB": -1})")),
                    Catch::Contains("stack.cuda_context_MiB: expected a number >= 0"));
  CHECK_THROWS_WITH(scenario_from(scenario_with(R"({"attention": "cudnn", "cuda_context_MiB": 1e9})")),
                    Catch::Contains("stack.cuda_context_MiB: expected at most 65536 MiB"));
  CHECK_THROWS_WITH(scenario_from(scenario_with(R"({"attention": "cudnn", "layer_framework_us": -5})")),
                    Catch::Contains("stack.layer_framework_us: expected a number >= 0"));
  CHECK_THROWS_WITH(scenario_from(scenario_with(R"({"attention": "cudnn", "layer_framework_us": 2e6})")),
                    Catch::Contains("stack.layer_framework_us: expected at most 1000000 us"));
  CHECK_THROWS_WITH(scenario_from(scenario_with(R"({"attention": "cudnn", "layer_framework_us": "50"})")),
                    Catch::Contains("stack.layer_framework_us: expected a number"));
  CHECK_THROWS_WITH(scenario_from(scenario_with(R"({"attention": "cudnn", "make_vocab_size_divisible_by": 0})")),
                    Catch::Contains("stack.make_vocab_size_divisible_by: expected an integer > 0, got 0"));
}

TEST_CASE("Megatron stacks pad the vocabulary to a multiple of 128 x TP, PyTorch's do not", "[workload][stack]") {
  // GPT-3 1.3B's 50,257 tokens at TP 2: Megatron-LM pads to a multiple of 256, 50,432.
  auto gpt = [](const std::string& stack) {
    std::string text = scenario_with(stack);
    return text.replace(text.find(kSmallLlama), kSmallLlama.size(), R"({"base": "gpt3-1.3b", "layers": 2})");
  };
  for (const std::string& stack :
       {std::string(), std::string(R"("megatron-lm-2021")"), std::string(R"("megatron-deepspeed")")}) {
    const TrainingScenario megatron = scenario_from(gpt(stack));
    CHECK(megatron.model.single().vocab == 50257);
    CHECK(megatron.model.single().padded_vocab() == 50432);
    // The logits GEMM's forward: each TP rank's 25,216 columns.
    const Model model(megatron.model.single());
    const auto head = model.output_steps(megatron.shard_context(), false);
    CHECK(step_named(head, "logits").forward->shape.at(1) == 50432 / 2);
  }
  for (const std::string& stack : {std::string(R"("pytorch-eager")"), std::string(R"("llm-foundry")")}) {
    CHECK(scenario_from(gpt(stack)).model.single().padded_vocab() == 50257);
  }
}

}  // namespace
}  // namespace weft
