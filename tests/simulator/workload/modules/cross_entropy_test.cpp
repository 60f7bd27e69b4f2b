#include <catch2/catch.hpp>

#include <algorithm>
#include <numeric>
#include <string>
#include <vector>

#include "simulator/workload/model.hpp"
#include "simulator/workload/modules/cross_entropy.hpp"
#include "tests/simulator/workload/training_test_support.hpp"

namespace weft {
namespace {

// One kernel's traffic per logit: bytes read and written.
struct KernelBytes {
  Bytes read = 0;
  Bytes written = 0;
};

Bytes total(const std::vector<KernelBytes>& kernels) {
  return std::accumulate(kernels.begin(), kernels.end(), Bytes{0},
                         [](Bytes sum, const KernelBytes& k) { return sum + k.read + k.written; });
}

TEST_CASE("each stack's cross-entropy moves what its kernels read and write", "[workload][stack][loss]") {
  // bf16 logits; each list is the implementation's kernels in order, counted from its source.
  SECTION("Megatron-LM: cast, max, subtract, exp, sum, divide; multiply and cast back") {
    const std::vector<KernelBytes> forward = {{2, 4}, {4, 0}, {4, 4}, {4, 4}, {4, 0}, {4, 4}};
    const std::vector<KernelBytes> backward = {{4, 4}, {4, 2}};
    const CrossEntropyTraffic traffic = cross_entropy_traffic(CrossEntropyKernels::megatron, 2);
    CHECK(traffic.forward == total(forward));    // 38
    CHECK(traffic.backward == total(backward));  // 14
    CHECK(traffic.saved == 4);                   // the fp32 softmax
    CHECK(traffic.forward_workspace == 0);       // every step after the cast works in place
    CHECK(traffic.backward_workspace == 0);
  }
  SECTION("Megatron-LM in fp32 training casts nothing") {
    const CrossEntropyTraffic traffic = cross_entropy_traffic(CrossEntropyKernels::megatron, 4);
    CHECK(traffic.forward == total({{4, 0}, {4, 4}, {4, 4}, {4, 0}, {4, 4}}));
    CHECK(traffic.backward == total({{4, 4}}));
  }
  SECTION("PyTorch: cast, log_softmax; zero-filled nll gradient, log_softmax backward, cast back") {
    const CrossEntropyTraffic traffic = cross_entropy_traffic(CrossEntropyKernels::pytorch, 2);
    CHECK(traffic.forward == total({{2, 4}, {4, 4}}));               // 14
    CHECK(traffic.backward == total({{0, 4}, {4 + 4, 4}, {4, 2}}));  // 22
    CHECK(traffic.saved == 4);                                       // fp32 log-probabilities
    // Forward peak: bf16 logits 2 + fp32 copy 4 + log-probs 4 = 10, of which the op's input (2)
    // and what it saves (4) are counted apart.
    CHECK(traffic.forward_workspace == 10 - 2 - 4);
    // Backward peak: log-probs 4 + nll gradient 4 + input gradient 4 = 12, of which the saved
    // log-probs (4) and the bf16 gradient the op makes (2) are counted apart.
    CHECK(traffic.backward_workspace == 12 - 4 - 2);
  }
  SECTION("fused: one read forward, a read and a write backward, over the bf16 logits") {
    const CrossEntropyTraffic traffic = cross_entropy_traffic(CrossEntropyKernels::fused, 2);
    CHECK(traffic.forward == 2);
    CHECK(traffic.backward == 4);
    CHECK(traffic.saved == 2);
    CHECK(traffic.forward_workspace + traffic.backward_workspace == 0);
  }
}

std::string scenario_with(const std::string& stack) {
  return R"({"model": )" + test::kSmallLlama + R"(, "cluster": {"base": "dgx-h100", "gpus": 8}, "stack": ")" + stack +
         R"(", "parallel": {"tp": 2, "pp": 2, "dp": 2}, "training": {"global_batch": 8, "seq_len": 1024}})";
}

const Step& loss_step(const std::vector<Step>& steps) {
  const auto found = std::find_if(steps.begin(), steps.end(), [](const Step& s) {
    return s.name.size() >= 13 && s.name.compare(s.name.size() - 13, 13, "cross_entropy") == 0;
  });
  REQUIRE(found != steps.end());
  return *found;
}

TEST_CASE("the loss op of each bundled stack", "[workload][stack][loss]") {
  // Llama 3's 128,256 tokens over TP 2 (the PyTorch stacks pad nothing; Megatron pads to 128 x 2),
  // one sample of 1,024 tokens per microbatch.
  struct Case {
    std::string stack;
    std::int64_t vocab;
    Bytes forward, backward, saved;
    Dtype dtype;
  };
  for (const Case& c :
       {Case{"megatron-core", 128256, 38, 14, 4, Dtype::fp32}, Case{"pytorch-eager", 128256, 14, 22, 4, Dtype::fp32},
        Case{"llm-foundry", 128256, 2, 4, 2, Dtype::bf16}}) {
    const TrainingScenario scenario = test::scenario_from(scenario_with(c.stack));
    const Model model(scenario.model.single());
    const std::vector<Step> head = model.output_steps(scenario.shard_context(), false);
    const Step& loss = loss_step(head);
    const std::int64_t logits = 1024 * (c.vocab / 2);
    CAPTURE(c.stack);
    CHECK(loss.forward->memory_bytes == logits * c.forward);
    CHECK(loss.backward->memory_bytes == logits * c.backward);
    CHECK(loss.saved_bytes == logits * c.saved);
    CHECK(loss.forward->dtype == c.dtype);
  }
}

TEST_CASE("PyTorch's loss holds its fp32 copies while it runs, with and without reuse", "[workload][stack][loss]") {
  const TrainingScenario scenario = test::scenario_from(scenario_with("pytorch-eager"));
  const test::TrainingRun reused = test::run_training(scenario, {}, true);
  const test::TrainingRun expanded = test::run_training(scenario, {.composites = false}, false);
  const Graph& graph = expanded.workload.graph;
  const std::int64_t logits = 1024 * (128256 / 2);
  std::vector<Bytes> workspaces;
  for (std::size_t i = 0; i < graph.op_count(); ++i) {
    const OpId op(static_cast<OpId::value_type>(i));
    const std::string name = graph.display_name(op);
    if (!name.ends_with("cross_entropy fwd mb0") && !name.ends_with("cross_entropy bwd mb0")) continue;
    for (TensorId tensor : graph.op_outputs(op)) {
      if (graph.tensor_kind(tensor) == TensorKind::workspace) workspaces.push_back(graph.tensor(tensor).bytes);
    }
  }
  std::sort(workspaces.begin(), workspaces.end());
  // Microbatch 0 on the last stage's one simulated rank: forward 4, backward 6 bytes per logit.
  CHECK(workspaces == std::vector<Bytes>{logits * 4, logits * 6});
  for (std::size_t d = 0; d < reused.result.devices.size(); ++d) {
    CHECK(reused.result.devices[d].peak_memory == expanded.result.devices[d].peak_memory);
  }
  CHECK(reused.result.makespan == expanded.result.makespan);
}

TEST_CASE("a stack's cross_entropy must be a known implementation", "[workload][stack][errors]") {
  CHECK_THROWS_WITH(
      test::scenario_from(
          R"({"model": )" + test::kSmallLlama +
          R"(, "cluster": {"base": "dgx-h100", "gpus": 8}, "stack": {"base": "megatron-core", "cross_entropy": "liger"}, "parallel": {"tp": 2, "dp": 4}, "training": {"global_batch": 8, "seq_len": 1024}})"),
      Catch::Contains("stack.cross_entropy: 'liger' is not one of megatron, pytorch or fused"));
}

}  // namespace
}  // namespace weft
