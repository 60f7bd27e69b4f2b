// Hybrid sharding (parallel.dp_shard): ZeRO shards over groups of data-parallel ranks and the
// groups all-reduce each rank's gradient shard among themselves.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "tests/simulator/workload/training_test_support.hpp"

namespace weft {
namespace {

using test::kSmallLlama;
using test::run_training;
using test::scenario_from;

// kSmallLlama (8 layers) on two 8-GPU nodes as DP16, 2 microbatches per replica.
std::string hybrid(int zero, int dp_shard) {
  const std::string shard = dp_shard > 0 ? R"(, "dp_shard": )" + std::to_string(dp_shard) : "";
  return R"({"model": )" + kSmallLlama + R"(, "cluster": {"base": "dgx-h100", "gpus": 16},
    "parallel": {"dp": 16, "zero": )" +
         std::to_string(zero) + shard + R"(},
    "training": {"global_batch": 32, "micro_batch": 1, "seq_len": 2048}})";
}

// The ops whose name holds `what`, in graph order.
std::vector<OpId> ops_named(const Graph& graph, const std::string& what) {
  std::vector<OpId> ops;
  for (std::uint32_t i = 0; i < graph.op_count(); ++i) {
    if (graph.op_name(OpId(i)).find(what) != std::string_view::npos) ops.push_back(OpId(i));
  }
  return ops;
}

const CommGroup& group_of(const TrainingWorkload& workload, OpId op) {
  return workload.cost_model->group(workload.graph.op_work(op).comm_group);
}

TEST_CASE("Hybrid ZeRO-3 gathers and reduce-scatters inside its shard group and all-reduces the shard across groups",
          "[workload][zero3][hybrid]") {
  const auto run = run_training(scenario_from(hybrid(3, 8)), {.composites = false});
  const Graph& graph = run.workload.graph;
  const std::vector<OpId> scatters = ops_named(graph, "grad reduce-scatter");
  const std::vector<OpId> replicas = ops_named(graph, "grad all-reduce over shard replicas");
  // 8 layers, the embedding and the output head: 10 units a microbatch, each reduce-scattered
  // and then all-reduced once.
  REQUIRE(scatters.size() == 2 * 10);
  REQUIRE(replicas.size() == scatters.size());
  for (std::size_t i = 0; i < scatters.size(); ++i) {
    // Ranks 0-7 on the first node shard; ranks 0 and 8, one on each node, hold the same shard.
    const CommGroup& shard = group_of(run.workload, scatters[i]);
    CHECK(shard.size == 8);
    CHECK(shard.nodes == 1);
    const CommGroup& across = group_of(run.workload, replicas[i]);
    CHECK(across.size == 2);
    CHECK(across.nodes == 2);
    CHECK(across.ranks_per_node == 1);
    // On a stream of its own, as FSDP's _all_reduce_stream: the next reduce-scatter runs beside it.
    CHECK(graph.op_stream(replicas[i]) != graph.op_stream(scatters[i]));
    // Each rank's shard of the unit's gradients: an eighth of what the group reduce-scatters.
    CHECK(graph.op_work(replicas[i]).op_class == OpClass::allreduce);
    CHECK(graph.op_work(replicas[i]).network_bytes == graph.op_work(scatters[i]).network_bytes / 8);
  }
  for (const OpId gather : ops_named(graph, "param all-gather")) CHECK(group_of(run.workload, gather).size == 8);

  // Memory: sharded over 8 ranks, not 16.
  const auto unsharded = run_training(scenario_from(hybrid(1, 0)), {.composites = false});
  const StaticMemory& whole = unsharded.report.stages[0].static_memory;  // ZeRO-1: parameters whole
  const StaticMemory& shard = run.report.stages[0].static_memory;
  CHECK(shard.parameters == whole.parameters / 8);
  CHECK(shard.gradients == whole.gradients / 8);
  // 12 bytes a parameter: the fp32 master copy and Adam's two moments.
  const Bytes parameters = whole.parameters / 2;
  CHECK(shard.optimizer_states == 12 * parameters / 8);
}

TEST_CASE("Hybrid ZeRO-1 all-reduces each bucket's shard over the groups that replicate it", "[workload][hybrid]") {
  const auto run = run_training(scenario_from(hybrid(1, 4)), {.composites = false});
  const Graph& graph = run.workload.graph;
  const std::vector<OpId> scatters = ops_named(graph, "grad reduce-scatter bucket");
  const std::vector<OpId> replicas = ops_named(graph, "grad all-reduce over shard replicas bucket");
  REQUIRE(!scatters.empty());
  REQUIRE(replicas.size() == scatters.size());
  for (std::size_t i = 0; i < scatters.size(); ++i) {
    CHECK(group_of(run.workload, scatters[i]).size == 4);
    CHECK(group_of(run.workload, scatters[i]).nodes == 1);
    // DP ranks 0, 4, 8 and 12: two on each node.
    const CommGroup& across = group_of(run.workload, replicas[i]);
    CHECK(across.size == 4);
    CHECK(across.nodes == 2);
    CHECK(across.ranks_per_node == 2);
    CHECK(graph.op_work(replicas[i]).network_bytes == graph.op_work(scatters[i]).network_bytes / 4);
  }
  const Bytes parameters = run.report.stages[0].static_memory.parameters / 2;  // bf16, whole under ZeRO-1
  CHECK(run.report.stages[0].static_memory.optimizer_states == 12 * parameters / 4);
}

TEST_CASE("A shard group of every data-parallel rank is plain ZeRO", "[workload][hybrid]") {
  for (const int zero : {1, 3}) {
    const auto plain = run_training(scenario_from(hybrid(zero, 0)));
    const auto whole = run_training(scenario_from(hybrid(zero, 16)));
    CHECK(whole.report.iteration_time_s == plain.report.iteration_time_s);
    CHECK(whole.report.stages[0].peak_memory == plain.report.stages[0].peak_memory);
    CHECK(ops_named(whole.workload.graph, "shard replicas").empty());
  }
}

TEST_CASE("dp_shard \"node\" shards over the data-parallel ranks of a node", "[workload][hybrid]") {
  auto scenario = [](const std::string& parallel) {
    return scenario_from(R"({"model": )" + kSmallLlama + R"(, "cluster": {"base": "dgx-h100", "gpus": 16},
      "parallel": )" + parallel +
                         R"(, "training": {"global_batch": 32, "micro_batch": 1, "seq_len": 2048}})");
  };
  // 8 GPUs a node: 8 DP ranks at TP1, 4 at TP2.
  CHECK(scenario(R"({"dp": 16, "zero": 3, "dp_shard": "node"})").parallel.dp_shard == 8);
  CHECK(scenario(R"({"tp": 2, "dp": 8, "zero": 3, "dp_shard": "node"})").parallel.dp_shard == 4);
  using Catch::Matchers::Contains;
  CHECK_THROWS_WITH(scenario(R"({"dp": 16, "zero": 3, "dp_shard": "rack"})"),
                    Contains("parallel.dp_shard: expected a number of data-parallel ranks or \"node\""));
  CHECK(node_shard_dp(8, 2, 2) == 2);
  CHECK(node_shard_dp(8, 3, 1) == std::nullopt);
  CHECK(node_shard_dp(8, 8, 2) == std::nullopt);
}

TEST_CASE("Hybrid sharding is refused where the plan cannot hold it", "[workload][hybrid]") {
  using Catch::Matchers::Contains;
  auto with = [](const std::string& parallel) {
    return R"({"model": )" + kSmallLlama + R"(, "cluster": {"base": "dgx-h100", "gpus": 16},
      "parallel": )" +
           parallel + R"(, "training": {"global_batch": 32, "micro_batch": 1, "seq_len": 2048}})";
  };
  CHECK_THROWS_WITH(scenario_from(with(R"({"dp": 16, "zero": 3, "dp_shard": 6})")),
                    Contains("parallel.dp_shard") && Contains("do not divide dp = 16"));
  CHECK_THROWS_WITH(scenario_from(with(R"({"dp": 16, "dp_shard": 8})")), Contains("set parallel.zero to 1, 2 or 3"));
  CHECK_THROWS_WITH(scenario_from(with(R"({"dp": 16, "zero": 3, "dp_shard": 1})")), Contains("shards nothing"));
  CHECK_THROWS_WITH(run_training(scenario_from(hybrid(3, 8)), true), Contains("--unfold: hybrid sharding"));
  // Per-sample data and stragglers simulate replicas apart, whose collectives join as one group.
  CHECK_THROWS_WITH(scenario_from(R"({"model": )" + kSmallLlama + R"(, "cluster": {"base": "dgx-h100", "gpus": 16},
      "parallel": {"dp": 16, "zero": 3, "dp_shard": 8}, "training": {"global_batch": 32, "seq_len": 2048},
      "data": {"dataset": "web-text-mix"}})"),
                    Contains("parallel.dp_shard") && Contains("per-sample data"));
  CHECK_THROWS_WITH(scenario_from(R"({"model": )" + kSmallLlama + R"(, "cluster": {"base": "dgx-h100", "gpus": 16,
      "stragglers": {"throttled": {"share": 0.1, "speed": [0.8, 0.9], "seed": 1}}},
      "parallel": {"dp": 16, "zero": 3, "dp_shard": 8}, "training": {"global_batch": 32, "seq_len": 2048}})"),
                    Contains("parallel.dp_shard") && Contains("stragglers"));
}

}  // namespace
}  // namespace weft
