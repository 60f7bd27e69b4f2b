// ZeRO-3 (training_sharded_layers.cpp): per-layer parameter gathers and gradient reduce-scatters.
#include <catch2/catch.hpp>

#include <map>
#include <string>

#include "tests/simulator/workload/training_test_support.hpp"

namespace weft {
namespace {

using Catch::Matchers::Contains;
using test::kSmallLlama;
using test::run_training;
using test::scenario_from;

// kSmallLlama (8 layers) on 8 GPUs as TP2 DP4, 4 microbatches per replica.
std::string sharded(int zero, const std::string& schedule = "1f1b", const std::string& recompute = "none") {
  return R"({"model": )" + kSmallLlama + R"(, "cluster": {"base": "dgx-h100", "gpus": 8},
    "parallel": {"tp": 2, "dp": 4, "zero": )" +
         std::to_string(zero) + R"(, "schedule": ")" + schedule + R"(", "recompute": ")" + recompute + R"("},
    "training": {"global_batch": 16, "micro_batch": 1, "seq_len": 2048}})";
}

struct Traffic {
  std::map<std::string, int> count;
  std::map<std::string, Bytes> bytes;
};

// The data-parallel collectives of the graph built op by op, by kind.
Traffic dp_traffic(const TrainingWorkload& workload) {
  Traffic traffic;
  const Graph& graph = workload.graph;
  for (std::uint32_t i = 0; i < graph.op_count(); ++i) {
    const std::string name(graph.op_name(OpId(i)));
    for (const char* kind : {"param all-gather fwd", "param all-gather bwd", "grad reduce-scatter"}) {
      if (name.find(kind) == std::string::npos) continue;
      ++traffic.count[kind];
      traffic.bytes[kind] += graph.op_work(OpId(i)).network_bytes;
    }
  }
  return traffic;
}

TEST_CASE("ZeRO-3 gathers every layer before its forward and its backward and reduce-scatters its gradients",
          "[workload][zero3]") {
  const auto one = run_training(scenario_from(sharded(1)), {.composites = false});
  const auto three = run_training(scenario_from(sharded(3)), {.composites = false});
  // The rank's parameters, from ZeRO-1's unsharded bf16 copy.
  const Bytes parameters = one.report.stages[0].static_memory.parameters / 2;
  const Traffic traffic = dp_traffic(three.workload);
  // 8 layers, the embedding and the output head (final norm and logits) are 10 units, each
  // gathered twice and reduce-scattered once per microbatch.
  const int microbatches = 4, units = 10;
  CHECK(traffic.count.at("param all-gather fwd") == microbatches * units);
  CHECK(traffic.count.at("param all-gather bwd") == microbatches * units);
  CHECK(traffic.count.at("grad reduce-scatter") == microbatches * units);
  // Each pass gathers every parameter once in bf16; each backward reduces every gradient once in
  // fp32 (Megatron-Core's bf16 training keeps fp32 gradients).
  CHECK(traffic.bytes.at("param all-gather fwd") == microbatches * 2 * parameters);
  CHECK(traffic.bytes.at("param all-gather bwd") == microbatches * 2 * parameters);
  CHECK(traffic.bytes.at("grad reduce-scatter") == microbatches * 4 * parameters);
  // ZeRO-1's bucketed reduction and gather are gone.
  auto buckets = [](const TrainingWorkload& workload) {
    int count = 0;
    for (std::uint32_t i = 0; i < workload.graph.op_count(); ++i) {
      count += workload.graph.op_name(OpId(i)).find("bucket") != std::string_view::npos;
    }
    return count;
  };
  CHECK(buckets(one.workload) > 0);
  CHECK(buckets(three.workload) == 0);

  // Memory: parameters, gradients and optimizer states all sharded over the 4 replicas.
  const StaticMemory& z1 = one.report.stages[0].static_memory;
  const StaticMemory& z3 = three.report.stages[0].static_memory;
  CHECK(z3.parameters == z1.parameters / 4);
  CHECK(z3.gradients == z1.gradients / 4);
  CHECK(z3.optimizer_states == z1.optimizer_states);
}

TEST_CASE("ZeRO-3 gathers the embedding table again for a tied head", "[workload][zero3]") {
  // GPT-3 1.3B cut to 4 layers ties its head to the embedding: the head's unit gathers the table
  // (vocabulary 50,257, padded by the Megatron-Core stack to a multiple of 128 x TP 2: 50,432;
  // x hidden 2,048, halved by TP) besides its final norm.
  auto tied = [](int zero) {
    std::string text = sharded(zero);
    return text.replace(text.find(kSmallLlama), kSmallLlama.size(), R"({"base": "gpt3-1.3b", "layers": 4})");
  };
  const auto one = run_training(scenario_from(tied(1)), {.composites = false});
  const TrainingWorkload three = build_training_workload(scenario_from(tied(3)), {.composites = false});
  const Bytes parameters = one.report.stages[0].static_memory.parameters / 2;
  const Bytes table = Bytes{50432} / 2 * 2048;  // each TP rank's columns of the logits GEMM
  const Traffic traffic = dp_traffic(three);
  CHECK(traffic.bytes.at("param all-gather fwd") == 4 * 2 * (parameters + table));
  // Its gradients are reduced once, with the embedding's.
  CHECK(traffic.bytes.at("grad reduce-scatter") == 4 * 4 * parameters);
}

TEST_CASE("ZeRO-3 holds at most two gathered layers and one layer's gradients beyond ZeRO-2's activations",
          "[workload][zero3][memory]") {
  const auto two = run_training(scenario_from(sharded(2)));
  const auto three = run_training(scenario_from(sharded(3)));
  // The largest unit is the output head or the embedding: the vocabulary (128,256 of Llama 3,
  // halved by TP) times hidden 2048. Gathered in bf16, its gradient in fp32.
  const double head = 128256.0 / 2 * 2048;
  const double extra = static_cast<double>(three.report.stages[0].activation_peak) -
                       static_cast<double>(two.report.stages[0].activation_peak);
  CHECK(extra >= 2 * head);                   // the head gathered, at least
  CHECK(extra <= 2 * (2 * head) + 4 * head);  // two gathered units and one unit's gradients, at most
}

TEST_CASE("ZeRO-3 gives the same answer with and without templates, folded and unfolded", "[workload][zero3]") {
  for (const char* schedule : {"1f1b", "gpipe"}) {
    for (const char* recompute : {"none", "full", "selective"}) {
      INFO(schedule << ", recompute " << recompute);
      const TrainingScenario scenario = scenario_from(sharded(3, schedule, recompute));
      const auto reused = run_training(scenario);
      const auto every_op = run_training(scenario, {.composites = false});
      const auto unfolded = run_training(scenario, {.unfold = true, .name_ops = false});
      CHECK(reused.report.iteration_time_s == every_op.report.iteration_time_s);
      CHECK(reused.report.stages[0].peak_memory == every_op.report.stages[0].peak_memory);
      CHECK(unfolded.report.iteration_time_s == Approx(reused.report.iteration_time_s).epsilon(1e-9));
    }
  }
}

TEST_CASE("ZeRO-3's bad plans are rejected with the reason", "[workload][zero3][errors]") {
  CHECK_THROWS_WITH(scenario_from(sharded(4)), Contains("parallel.zero: expected 0 (no sharding)") &&
                                                   Contains("or 3 (parameters too, gathered layer by layer"));
  CHECK_THROWS_WITH(scenario_from(sharded(3, "zb-h1")),
                    Contains("parallel.zero: ZeRO-3 reduce-scatters each layer's gradients in its backward pass"));
}

}  // namespace
}  // namespace weft
