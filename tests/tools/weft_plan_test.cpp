// `weft plan` end to end, through the real binary.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <filesystem>

#include "tests/simulator/planner/dip/dip_test_support.hpp"
#include "tests/support/cli_expectations.hpp"
#include "tests/support/run_command.hpp"

namespace weft {
namespace {

using Catch::Matchers::Contains;
using test::read_file;
using test::run_weft;
using test::TempDir;

TEST_CASE("weft plan searches a schedule for the bundled VLM-S batch and writes the plan", "[cli][plan]") {
  const TempDir dir;
  const auto run = run_weft("plan '" + test::experiment("vlm-s-16xh800-dip") + "' --iterations 4 --threads 2 --json '" +
                            dir.file("plan.json").string() + "' --trace '" + dir.file("trace.json").string() + "'");
  INFO(run.err);
  REQUIRE(run.exit_code == 0);
  CHECK_THAT(run.out, Contains("Batch    256 microbatches") && Contains("Modality-aware partition") &&
                          Contains("interleaved (the scenario's plan)") &&
                          Contains("+ modality-module-level ranking (MCTS)") && Contains("+ model layer tuning"));
  const auto plan = nlohmann::json::parse(read_file(dir.file("plan.json")));
  CHECK(plan["pp"] == 4);
  CHECK(plan["microbatches"] == 256);
  CHECK(plan["ranks"].size() == 4);
  CHECK(plan["schedules"].size() == 4);
  CHECK(plan["modules"][0]["name"] == "vision");
  CHECK(plan["modules"][1]["name"] == "language");
  // DIP's schedule loses to the scenario's interleaved 1F1B here, so the plan returned is that.
  CHECK(plan["other_baselines"].empty());
  CHECK(plan["returned_baseline"] == "interleaved (the scenario's plan)");
  CHECK(plan["iteration_ms"].get<double>() == plan["schedules"][0]["iteration_ms"].get<double>());
  CHECK(plan["schedules"][3]["iteration_ms"].get<double>() > plan["iteration_ms"].get<double>());
  CHECK_THAT(run.out, Contains("Returned the baseline interleaved (the scenario's plan), faster than DIP's schedule"));
  CHECK(plan["stage_model_overlaps_tp"] == false);  // no sequence parallelism
  const auto trace = nlohmann::json::parse(read_file(dir.file("trace.json")));
  CHECK(trace["traceEvents"].size() > plan["ranks"][0]["actions"].size());
  // Every rank's first action is a forward stage (nothing to wait for yet on rank 0) or a receive.
  const std::string first = plan["ranks"][0]["actions"][0]["action"];
  CHECK(first == "forward_stage");
}

TEST_CASE("weft plan plans every DP replica of per-sample data and reports the slowest", "[cli][plan]") {
  const TempDir dir;
  const auto scenario =
      dir.write("s.json", test::with_two_replicas(test::small_vlm_scenario(test::kImageTextData, "", false, 32)));
  const auto run =
      run_weft("plan '" + scenario.string() + "' --iterations 4 --json '" + dir.file("plan.json").string() + "'");
  INFO(run.err);
  REQUIRE(run.exit_code == 0);
  CHECK_THAT(run.out, Contains("the slowest as planned of the 2 with batches of their own") &&
                          Contains("Each DP replica's batch on the stage model") && Contains("iteration (slowest)"));
  const auto plan = nlohmann::json::parse(read_file(dir.file("plan.json")));
  REQUIRE(plan["replicas"].size() == 2);
  const double slowest =
      std::max(plan["replicas"][0]["planned_ms"].get<double>(), plan["replicas"][1]["planned_ms"].get<double>());
  CHECK(plan["iteration_ms"].get<double>() == Approx(slowest));
}

TEST_CASE("weft plan overlaps TP communication as the scenario's stack does, and says weft live does not",
          "[cli][plan]") {
  // Sequence parallelism under Megatron-Core's stack (tp_comm_overlap): the stage model overlaps
  // the forward pass's TP communication with its GEMMs; the execution plan weft live runs does not.
  const TempDir dir;
  const auto scenario = dir.write("s.json", test::small_vlm_scenario("", R"(, "sequence_parallel": true)"));
  const auto run =
      run_weft("plan '" + scenario.string() + "' --iterations 4 --json '" + dir.file("plan.json").string() + "'");
  INFO(run.err);
  REQUIRE(run.exit_code == 0);
  CHECK(nlohmann::json::parse(read_file(dir.file("plan.json")))["stage_model_overlaps_tp"] == true);
  CHECK_THAT(run.out, Contains("and overlaps the forward pass's TP communication with its GEMMs as the scenario's "
                               "stack does, where weft live runs TP collectives on their own"));
}

TEST_CASE("weft plan rejects bad input with exit 2 and writes nothing", "[cli][plan][errors]") {
  const TempDir dir;
  const auto plan_file = dir.file("plan.json");
  auto rejects = [&](const std::string& scenario_text, const std::string& flags, const std::string& message) {
    const auto scenario = dir.write("s.json", scenario_text);
    const auto run =
        run_weft("plan '" + scenario.string() + "' --iterations 2 --emit-plan '" + plan_file.string() + "' " + flags);
    INFO(run.err);
    CHECK(run.exit_code == 2);
    CHECK_THAT(run.err, Contains("weft: error: ") && Contains(message));
    CHECK_FALSE(std::filesystem::exists(plan_file));
  };
  rejects(test::small_vlm_scenario(R"({"samples": "no-such-file.jsonl"})"), "", "no-such-file.jsonl");
  rejects(test::small_vlm_scenario(R"({"dataset": "no-such-dataset"})"), "", "no-such-dataset");
  rejects(test::small_vlm_scenario(test::kImageTextData), "--memory-limit-gib 4", "leaves nothing for activations");
  rejects(test::small_vlm_scenario(test::kImageTextData), "--memory-limit-gib 13.4", "is too small for this batch");
  rejects(test::small_vlm_scenario(test::kImageTextData, R"(, "schedule": "zb-h1")"), "",
          "parallel.schedule: zb-h1 splits weight passes");
  rejects(test::small_vlm_scenario(test::kImageTextData), "--time-budget 0", "--time-budget: expected seconds > 0");
  rejects(test::small_vlm_scenario(test::kImageTextData), "--sub-microbatch -1", "--sub-microbatch");
  rejects(test::with_two_replicas(test::small_vlm_scenario(test::kImageTextData, "", false, 32)), "",
          "--emit-plan: with per-sample data each of the 2 DP replicas has a schedule of its own");
  // The stage model prices Megatron-LM's recompute policies, not PyTorch's per-op checkpointing.
  std::string per_op = test::small_vlm_scenario(test::kImageTextData, R"(, "recompute": "selective")");
  per_op.replace(per_op.find(R"("cluster":)"), 10, R"("stack": "pytorch-eager", "cluster":)");
  rejects(per_op, "", "parallel.recompute: 'selective' under stack 'pytorch-eager' is per-op checkpointing");
}

TEST_CASE("weft live runs the plan weft plan emits, on two ranks", "[cli][plan][live][mpi]") {
  const TempDir dir;
  // The bundled CPU VLM, with fewer and shorter sequences so that an iteration takes a second.
  auto scenario = nlohmann::json::parse(read_file(test::experiment("cpu-vlm-pp2-dip")));
  scenario["training"]["global_batch"] = 2;
  scenario["training"]["seq_len"] = 128;
  const auto scenario_file = dir.write("cpu-vlm.json", scenario.dump());
  const auto plan_file = dir.file("plan.json");
  const auto simulated_file = dir.file("simulated.json");
  const auto plan = run_weft("plan '" + scenario_file.string() + "' --iterations 4 --emit-plan '" + plan_file.string() +
                             "' --simulated-trace '" + simulated_file.string() + "'");
  INFO(plan.err);
  REQUIRE(plan.exit_code == 0);
  CHECK_THAT(plan.out, Contains("the execution plan of 2 ranks") && Contains("This plan under the full simulator"));
  const auto trace_file = dir.file("measured.json");
  const auto live = test::run_weft_mpi(
      2, "live '" + plan_file.string() + "' --warmup 0 --iterations 1 --trace '" + trace_file.string() + "'");
  INFO(live.err);
  REQUIRE(live.exit_code == 0);
  CHECK_THAT(live.out, Contains("Iteration time") && Contains("Simulated"));
  // The measured trace holds both ranks' stages' ops and the transfers between them.
  const auto trace = nlohmann::json::parse(read_file(trace_file));
  std::size_t sends = 0;
  std::size_t vision = 0;
  for (const auto& event : trace["traceEvents"]) {
    if (event.value("ph", "") != "X") continue;
    const std::string name = event.value("name", "");
    sends += name.rfind("transfer", 0) == 0 ? 1 : 0;
    vision += name.find("fwd") != std::string::npos ? 1 : 0;
  }
  CHECK(sends > 0);
  CHECK(vision > 0);
  // The plan as simulated and as measured compare rank by rank.
  const auto validate = run_weft("validate '" + simulated_file.string() + "' '" + trace_file.string() + "'");
  INFO(validate.err);
  REQUIRE(validate.exit_code == 0);
  CHECK_THAT(validate.out,
             Contains("compute time per rank") && Contains("stage 0 ") && Contains("stage 1 ") && Contains("gemm"));
}

}  // namespace
}  // namespace weft
