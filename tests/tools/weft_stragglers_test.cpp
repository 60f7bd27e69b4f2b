// Stragglers through the weft binary: a bundled scenario with throttled GPUs and a slow NIC, a
// slow NVLink, a sweep that plans around a slow stage, and bad sections.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "tests/support/cli_expectations.hpp"
#include "tests/support/run_command.hpp"

namespace weft {
namespace {

using Catch::Matchers::Contains;
using test::read_file;
using test::run_weft;
using test::TempDir;

TEST_CASE("weft simulate names the straggler the iteration waits for", "[cli][stragglers]") {
  const TempDir dir;
  const auto run = run_weft("simulate '" + test::experiment("llama3-70b-1024xh100-stragglers") + "' --json '" +
                            dir.file("r.json").string() + "'");
  INFO(run.err);
  REQUIRE(run.exit_code == 0);
  CHECK_THAT(run.out, Contains("Stragglers") && Contains("the iteration waits for GPU") &&
                          Contains("slowest NICs: node 17 at 50.0%") &&
                          Contains("slower than the same plan on healthy parts") &&
                          Contains("each DP replica that stragglers set apart"));
  const auto json = nlohmann::json::parse(read_file(dir.file("r.json")));
  const auto& stragglers = json["stragglers"];
  // 0.5% of 1,024 GPUs: about 5 drawn.
  CHECK(stragglers["slow_gpus"].get<int>() > 0);
  CHECK(stragglers["slow_gpus"].get<int>() < 20);
  CHECK(stragglers["slow_nics"] == 1);
  CHECK(stragglers["speed"].get<double>() >= 0.8);
  CHECK(stragglers["speed"].get<double>() <= 0.9);
  CHECK(stragglers["gpu"].get<int>() >= 0);
  const double healthy = stragglers["healthy_iteration_time_s"].get<double>();
  CHECK(healthy < json["iteration_time_s"].get<double>());
  // No faster than the healthy plan with every GPU at the straggler's speed allows, no slower
  // than all of its compute at that speed.
  CHECK(json["iteration_time_s"].get<double>() <= healthy / stragglers["speed"].get<double>() * 1.01);
}

TEST_CASE("weft simulate costs the TP collectives of a node with a slow NVLink at its rate", "[cli][stragglers]") {
  // TP 4 on each of two 4-GPU nodes, node 1's NVLink at half rate: its replica's TP all-reduces
  // take longer and the gradient reduction waits for it; folded and unfolded agree.
  const TempDir dir;
  const std::string scenario =
      dir.write("s.json", R"({"model": {"base": "llama3-8b", "layers": 8, "hidden": 2048, "ffn_hidden": 7168,
                                           "heads": 16, "kv_heads": 4},
                                 "cluster": {"base": "dgx-h100", "gpus": 8, "gpus_per_node": 4,
                                             "stragglers": {"nvlinks": [{"node": 1, "speed": 0.5}]}},
                                 "parallel": {"tp": 4, "dp": 2},
                                 "training": {"global_batch": 16, "seq_len": 2048}})")
          .string();
  const auto folded = run_weft("simulate '" + scenario + "' --json '" + dir.file("f.json").string() + "'");
  const auto unfolded = run_weft("simulate '" + scenario + "' --unfold --json '" + dir.file("u.json").string() + "'");
  INFO(folded.err << unfolded.err);
  REQUIRE(folded.exit_code == 0);
  REQUIRE(unfolded.exit_code == 0);
  CHECK_THAT(folded.out, Contains("0 slow GPUs, 0 slow NICs, 1 slow NVLink; slowest NVLink: node 1 at 50.0%"));
  const auto json = nlohmann::json::parse(read_file(dir.file("f.json")));
  CHECK(json["stragglers"]["slow_nvlinks"] == 1);
  CHECK(json["stragglers"]["nvlink_node"] == 1);
  CHECK(json["iteration_time_s"].get<double>() > json["stragglers"]["healthy_iteration_time_s"].get<double>());
  CHECK(json["iteration_time_s"] == nlohmann::json::parse(read_file(dir.file("u.json")))["iteration_time_s"]);
}

TEST_CASE("weft sweep gives the stages of slow GPUs fewer layers", "[cli][stragglers]") {
  const TempDir dir;
  const std::string scenario =
      dir.write("s.json", R"({"model": {"base": "llama3-8b", "layers": 8, "hidden": 2048, "ffn_hidden": 7168,
                                           "heads": 16, "kv_heads": 4},
                                 "cluster": {"base": "dgx-h100", "gpus": 8,
                                             "stragglers": {"gpus": [{"gpu": 7, "speed": 0.5}]}},
                                 "training": {"global_batch": 16, "seq_len": 2048}})")
          .string();
  const auto run = run_weft("sweep '" + scenario +
                            "' --grid 'tp=2 pp=2 cp=1 vpp=1 mb=1 recompute=none zero=0 "
                            "schedule=1f1b sp=0' --top 1 --json '" +
                            dir.file("s.json.out").string() + "'");
  INFO(run.err);
  REQUIRE(run.exit_code == 0);
  const auto json = nlohmann::json::parse(read_file(dir.file("s.json.out")));
  const auto layers = json["plans"][0]["stage_layers"].get<std::vector<int>>();
  REQUIRE(layers.size() == 2);
  CHECK(layers[0] > layers[1]);  // GPU 7 is on the last stage
}

TEST_CASE("bad stragglers sections are refused with their path", "[cli][stragglers][errors]") {
  auto scenario = [](const std::string& stragglers) {
    return R"({"model": "gpt3-1.3b", "cluster": {"base": "dgx-h100", "gpus": 8, "stragglers": )" + stragglers +
           R"(}, "parallel": {"tp": 8}, "training": {"global_batch": 8, "seq_len": 2048}})";
  };
  test::expect_simulate_rejects(scenario(R"({"gpus": [{"gpu": 2, "speed": 1.5}]})"),
                                "cluster.stragglers.gpus[0].speed");
  test::expect_simulate_rejects(scenario(R"({"gpus": [{"gpu": 8, "speed": 0.5}]})"), "below 8");
  test::expect_simulate_rejects(scenario(R"({"nics": [{"node": 0, "speed": 0.5}, {"node": 0, "speed": 0.4}]})"),
                                "listed twice");
  test::expect_simulate_rejects(scenario(R"({"nvlinks": [{"node": 1, "speed": 0.5}]})"),
                                "cluster.stragglers.nvlinks[0].node: expected a node below 1");
  test::expect_simulate_rejects(scenario(R"({"throttled": {"share": 0.1, "speed": [0.9, 0.8], "seed": 3}})"),
                                "cluster.stragglers.throttled.speed");
  // An execution plan is not made for slow GPUs.
  test::expect_simulate_rejects(scenario(R"({"gpus": [{"gpu": 2, "speed": 0.5}]})"), "without them to emit it",
                                "--emit-plan plan.json");
}

TEST_CASE("weft simulate runs a cluster of H100 and A100 nodes", "[cli][mixed]") {
  const TempDir dir;
  const auto run = run_weft("simulate '" + test::experiment("llama3-70b-512xh100-a100-mixed") + "' --json '" +
                            dir.file("r.json").string() + "'");
  INFO(run.err);
  REQUIRE(run.exit_code == 0);
  CHECK_THAT(run.out, Contains("512 GPUs (h100-sxm; nodes 32-63 a100-sxm-80gb)") &&
                          Contains("(the mean of the cluster's GPUs)"));
  const auto json = nlohmann::json::parse(read_file(dir.file("r.json")));
  const auto layers = json["parallel"]["stage_layers"].get<std::vector<int>>();
  REQUIRE(layers.size() == 4);
  // Stages 0-1 on H100s, 2-3 on A100s: the A100 stages hold fewer layers.
  CHECK(std::min(layers[0], layers[1]) > std::max(layers[2], layers[3]));
  // The A100 stages' memory is the A100's 80 GiB.
  CHECK(json["stages"][3]["memory_capacity_bytes"].get<std::int64_t>() == std::int64_t{80} << 30);
}

TEST_CASE("bad node groups are refused with their path", "[cli][mixed][errors]") {
  test::expect_simulate_rejects(
      R"({"model": "gpt3-1.3b", "cluster": {"base": "dgx-h100", "gpus": 16, "node_groups": [
           {"first_node": 0, "nodes": 2, "gpu": "a100-sxm-80gb"}, {"first_node": 1, "nodes": 1, "gpu": "a100-sxm-40gb"}]},
         "parallel": {"tp": 8}, "training": {"global_batch": 8, "seq_len": 2048}})",
      "cluster.node_groups[1].first_node");
}

TEST_CASE("weft sweep plans a mixed cluster without pruning", "[cli][mixed]") {
  const TempDir dir;
  const std::string scenario =
      dir.write("m.json", R"({"model": {"base": "llama3-8b", "layers": 8, "hidden": 2048, "ffn_hidden": 7168,
                                        "heads": 16, "kv_heads": 4},
                              "cluster": {"base": "dgx-h100", "gpus": 16,
                                          "node_groups": [{"first_node": 1, "nodes": 1, "gpu": "a100-sxm-80gb"}]},
                              "training": {"global_batch": 32, "seq_len": 2048}})")
          .string();
  const auto run = run_weft("sweep '" + scenario + "' --grid 'tp=8 pp=1,2 cp=1 mb=1 recompute=none zero=0 sp=0' " +
                            "--top 1 --json '" + dir.file("out.json").string() + "'");
  INFO(run.err);
  REQUIRE(run.exit_code == 0);
  CHECK_THAT(run.out, Contains("16 GPUs (h100-sxm; nodes 1-1 a100-sxm-80gb)"));
  const auto json = nlohmann::json::parse(read_file(dir.file("out.json")));
  bool balanced_pp2 = false;
  for (const auto& plan : json["plans"]) {
    CHECK(plan["status"] != "pruned");
    if (plan["pp"] == 2 && plan["vpp"] == 1) {
      const auto layers = plan["stage_layers"].get<std::vector<int>>();
      balanced_pp2 = layers.size() == 2 && layers[0] > layers[1];  // the A100 node holds stage 1
    }
  }
  CHECK(balanced_pp2);
}

}  // namespace
}  // namespace weft
