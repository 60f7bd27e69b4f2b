#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <map>
#include <string>

#include "tests/simulator/workload/training_test_support.hpp"

namespace weft {
namespace {

std::string overlap_scenario(const std::string& stack, const std::string& parallel,
                             const std::string& cluster = R"({"base": "dgx-h100", "gpus": 8})") {
  return R"({"model": )" + test::kSmallLlama + R"(, "cluster": )" + cluster + R"(, "stack": )" + stack +
         R"(, "parallel": )" + parallel + R"(, "training": {"global_batch": 8, "seq_len": 2048}})";
}

constexpr const char* kOverlapTp2Sp = R"({"tp": 2, "pp": 2, "dp": 2, "sequence_parallel": true})";

// The ops of one microbatch's forward pass of layer 1 on the first stage's rank, by name.
struct OverlapLayerOps {
  std::map<std::string, OpId> by_name;
  const test::TrainingRun& run;
  OpId at(const std::string& name) const {
    const auto found = by_name.find(name);
    REQUIRE(found != by_name.end());
    return found->second;
  }
  TimeNs start(const std::string& name) const { return run.result.start(at(name)); }
  TimeNs end(const std::string& name) const { return run.result.end(at(name)); }
  const OpWork& work(const std::string& name) const { return run.workload.graph.op_work(at(name)); }
};

OverlapLayerOps overlap_layer_ops(const test::TrainingRun& run) {
  OverlapLayerOps ops{{}, run};
  const Graph& graph = run.workload.graph;
  const DeviceId device = run.workload.ranks.front().device;
  for (std::size_t i = 0; i < graph.op_count(); ++i) {
    const OpId op(static_cast<OpId::value_type>(i));
    const std::string name = graph.display_name(op);
    if (graph.op_device(op) == device && name.rfind("L1.", 0) == 0 && name.find(" mb0") != std::string::npos)
      ops.by_name.emplace(name, op);
  }
  return ops;
}

TEST_CASE("Megatron-Core overlaps forward TP communication with the GEMMs beside it", "[workload][stack][tp]") {
  const TrainingScenario scenario = test::scenario_from(overlap_scenario(R"("megatron-core")", kOverlapTp2Sp));
  REQUIRE(scenario.overlaps_tp_communication());
  const test::TrainingRun run = test::run_training(scenario, {.composites = false}, false);
  const OverlapLayerOps ops = overlap_layer_ops(run);
  // 2,048 tokens, hidden 2,048: the all-gather before the QKV GEMM moves 2048 x 2048 x 2 bytes.
  const Bytes gathered = 2048 * 2048 * 2;

  SECTION("ring exchange: the GEMM in TP parts, each after its shard arrives") {
    // QKV: 2,048 + 2 x 512 (4 KV heads of 128) outputs over TP 2; each part half the tokens.
    CHECK(ops.work("L1.attn.qkv fwd mb0 part 1/2").shape == WorkShape{1024, 1536, 2048});
    CHECK(ops.work("L1.attn.tp_enter send mb0 1/1").network_bytes == gathered / 2);
    // The first part runs on the rank's own shard while it is passed on; the second waits for both.
    CHECK(ops.start("L1.attn.tp_enter send mb0 1/1") == ops.start("L1.attn.qkv fwd mb0 part 1/2"));
    CHECK(ops.start("L1.attn.qkv fwd mb0 part 2/2") ==
          std::max(ops.end("L1.attn.qkv fwd mb0 part 1/2"), ops.end("L1.attn.tp_enter send mb0 1/1")));
    CHECK_FALSE(ops.by_name.contains("L1.attn.tp_enter fwd mb0"));  // no all-gather of its own
  }
  SECTION("pipeline: the GEMM in 4 parts, each part reduce-scattered while the next computes") {
    for (int k = 1; k <= 4; ++k) {
      const std::string part = "L1.attn.proj fwd mb0 part " + std::to_string(k) + "/4";
      const std::string scatter = "L1.attn.tp_exit fwd mb0 part " + std::to_string(k) + "/4";
      CHECK(ops.work(part).shape == WorkShape{512, 2048, 1024});
      CHECK(ops.work(scatter).network_bytes == gathered / 4);
      const TimeNs previous = k == 1 ? 0 : ops.end("L1.attn.tp_exit fwd mb0 part " + std::to_string(k - 1) + "/4");
      CHECK(ops.start(scatter) == std::max(ops.end(part), previous));
    }
    CHECK(ops.start("L1.attn_residual fwd mb0") == ops.end("L1.attn.tp_exit fwd mb0 part 4/4"));
    // Each part runs on the 116 of the H100's 132 SMs that the 16 of the reduce-scatter leave.
    const std::string part = "L1.attn.proj fwd mb0 part 1/4";
    OpWork alone = ops.work(part);
    CHECK(alone.reserved_sms == 16);
    alone.reserved_sms = 0;
    const double on_all_sms = static_cast<double>(run.workload.cost_model->duration(alone, scenario.cluster.gpu));
    CHECK(run.result.duration(ops.at(part)) == std::llround(on_all_sms * 132.0 / 116.0));
  }
}

TEST_CASE("without the overlap the collectives run on their own, and the iteration is longer",
          "[workload][stack][tp]") {
  const std::string off = R"({"base": "megatron-core", "tp_comm_overlap": false})";
  const TrainingScenario plain = test::scenario_from(overlap_scenario(off, kOverlapTp2Sp));
  CHECK_FALSE(plain.overlaps_tp_communication());
  const test::TrainingRun run = test::run_training(plain, {.composites = false}, false);
  const OverlapLayerOps ops = overlap_layer_ops(run);
  CHECK(ops.end("L1.attn.tp_enter fwd mb0") == ops.start("L1.attn.qkv fwd mb0"));
  const test::TrainingRun overlapped =
      test::run_training(test::scenario_from(overlap_scenario(R"("megatron-core")", kOverlapTp2Sp)));
  CHECK(overlapped.result.makespan < run.result.makespan);
}

TEST_CASE("TP communication overlaps only with sequence parallelism, on GPUs, with TP inside a node",
          "[workload][stack][tp]") {
  CHECK_FALSE(test::scenario_from(overlap_scenario(R"("megatron-core")", R"({"tp": 2, "pp": 2, "dp": 2})"))
                  .overlaps_tp_communication());
  CHECK_FALSE(test::scenario_from(overlap_scenario(R"("pytorch-eager")", kOverlapTp2Sp)).overlaps_tp_communication());
  CHECK_FALSE(
      test::scenario_from(overlap_scenario(R"("megatron-core")", R"({"tp": 4, "dp": 2, "sequence_parallel": true})",
                                           R"({"base": "dgx-h100", "gpus": 8, "gpus_per_node": 2})"))
          .overlaps_tp_communication());
  CHECK_THROWS_WITH(
      test::scenario_from(overlap_scenario(R"({"base": "megatron-core", "tp_comm_overlap": "on"})", kOverlapTp2Sp)),
      Catch::Contains("stack.tp_comm_overlap: expected true or false, got a string"));
}

}  // namespace
}  // namespace weft
