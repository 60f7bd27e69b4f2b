// `weft sweep` on models of several modules and on per-sample data, through the real binary: each
// best plan is simulated again by `weft simulate` from the plan the sweep's JSON describes.
#include <filesystem>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "tests/simulator/workload/multimodal_test_support.hpp"
#include "tests/support/cli_expectations.hpp"
#include "tests/support/run_command.hpp"

namespace weft {
namespace {

using Catch::Matchers::Contains;
using Catch::Matchers::StartsWith;
using test::read_file;
using test::run_weft;
using test::TempDir;

// The sweep's scenario with the parallel section of a plan of its JSON output.
nlohmann::json scenario_of_plan(const std::string& sweep_scenario, const nlohmann::json& plan) {
  nlohmann::json scenario = nlohmann::json::parse(read_file(sweep_scenario));
  nlohmann::json parallel = {{"tp", plan["tp"]},
                             {"pp", plan["pp"]},
                             {"dp", plan["dp"]},
                             {"cp", plan["cp"]},
                             {"vpp", plan["vpp"]},
                             {"sequence_parallel", plan["sequence_parallel"]},
                             {"recompute", plan["recompute"]},
                             {"zero", plan["zero"]},
                             {"schedule", plan["schedule"]},
                             {"stage_layers", plan["stage_layers"]}};
  if (plan["layout"] == "modality") {
    // "vision:1,language:3", or with meshes "vision:1/tp1/dp2,language:3" (their degrees in "modules")
    nlohmann::json stages = nlohmann::json::object();
    std::string text = plan["module_stages"];
    for (std::size_t from = 0; from < text.size();) {
      const std::size_t comma = std::min(text.find(',', from), text.size());
      const std::string item = text.substr(from, comma - from);
      stages[item.substr(0, item.find(':'))] = std::stoi(item.substr(item.find(':') + 1));
      from = comma + 1;
    }
    parallel["modality_stages"] = stages;
    if (plan.contains("modules")) parallel["modules"] = plan["modules"];
  }
  scenario["parallel"] = parallel;
  scenario["training"]["micro_batch"] = plan["micro_batch"];
  return scenario;
}

// Sweeps `scenario` over `grid`, then simulates its best plan alone: the same throughput.
nlohmann::json sweep_and_check_best(const TempDir& dir, const std::string& scenario, const std::string& grid) {
  const auto sweep = run_weft("sweep '" + scenario + "' --grid '" + grid + "' --all --top 5 --json '" +
                              dir.file("plans.json").string() + "' --csv '" + dir.file("plans.csv").string() +
                              "' --trace-best '" + dir.file("best.json").string() + "'");
  INFO(sweep.err);
  REQUIRE(sweep.exit_code == 0);
  const nlohmann::json plans = nlohmann::json::parse(read_file(dir.file("plans.json")));
  REQUIRE(plans["feasible"].get<int>() > 0);
  const nlohmann::json& best = plans["plans"][0];
  const auto chosen = dir.write("best-plan.json", scenario_of_plan(scenario, best).dump(2));
  const auto simulate = run_weft("simulate '" + chosen.string() + "' --json '" + dir.file("alone.json").string() + "'");
  INFO(simulate.err);
  REQUIRE(simulate.exit_code == 0);
  const nlohmann::json alone = nlohmann::json::parse(read_file(dir.file("alone.json")));
  CHECK(alone["tokens_per_s"].get<double>() == Approx(best["tokens_per_s"].get<double>()).epsilon(1e-12));
  CHECK(nlohmann::json::parse(read_file(dir.file("best.json"))).contains("traceEvents"));
  return plans;
}

TEST_CASE("weft sweep searches a VLM's shared pipeline and stages per module", "[cli][sweep][modality]") {
  const TempDir dir;
  const nlohmann::json plans = sweep_and_check_best(dir, test::experiment("vlm-s-16xh800"),
                                                    "tp=4 pp=2,4 mb=1 zero=1 recompute=none schedule=1f1b sp=0");
  // pp 2 and 4: shared by parameters and by time, modality by parameters and by time.
  CHECK(plans["considered"] == 8);
  int modality = 0;
  for (const auto& plan : plans["plans"]) {
    if (plan["layout"] != "modality") continue;
    ++modality;
    CHECK_THAT(plan["label"].get<std::string>(), Contains("modality=vision:"));
    CHECK_THAT(plan["module_stages"].get<std::string>(), StartsWith("vision:"));
  }
  CHECK(modality == 4);
  const std::string csv = read_file(dir.file("plans.csv"));
  CHECK_THAT(csv, Contains(",1f1b,modality,\"vision:") && Contains(",1f1b,shared,\"\",time,"));
}

TEST_CASE("weft sweep tries modules on meshes of their own, as DFLOP lays them out", "[cli][sweep][meshes]") {
  // LLaVA-OV with Llama 3 8B on 32 A100s at TP2, 252 samples, the SigLIP encoder on stage 0 of 4 or
  // of 3. At PP4: uniform (dp 4); the encoder at TP1 DP2 or TP2 DP1 leaves the language model dp
  // (32 - 2) / (3 x 2) = 5, which does not divide the batch; TP2 DP4 is the uniform plan; the three
  // other meshes do not share out the GPUs. At PP3: no uniform plan (2 x 3 does not divide 32); the
  // encoder on 4 GPUs (TP1 DP4, TP2 DP2) leaves dp (32 - 4) / (2 x 2) = 7, on 8 (TP2 DP4) dp 6; the
  // three others do not share out the GPUs.
  const TempDir dir;
  const nlohmann::json plans = sweep_and_check_best(
      dir, test::experiment("llava-ov-llama3-8b-32xa100-uniform"),
      "tp=2 pp=3,4 mb=1 zero=1 recompute=full schedule=1f1b sp=0 layout=modality partition=parameters "
      "module_tp=1,2 module_dp=1,2,4");
  CHECK(plans["considered"] == 13);
  CHECK(plans["feasible"] == 4);
  // DFLOP's own layout (weft dflop's, llava-ov-llama3-8b-32xa100-meshes.json) comes first.
  const nlohmann::json& best = plans["plans"][0];
  CHECK(best["modules"] == nlohmann::json::parse(R"({"vision": {"tp": 1, "dp": 4}})"));
  CHECK(best["dp"] == 7);
  CHECK(best["module_stages"] == "vision:1/tp1/dp4,language:2");
  CHECK_THAT(read_file(dir.file("plans.csv")), Contains(",1f1b,modality,\"vision:1/tp1/dp4,language:2\","));
}

TEST_CASE("weft sweep gives each encoder its own mesh", "[cli][sweep][meshes]") {
  // The small two-encoder model's vision and audio encoders on a stage each at TP 1 or 2 and DP 1
  // or 2, the language model on one at TP2 on 8 GPUs: 16 pairs beside the uniform plan
  // (mesh_plans_test.cpp counts them by hand).
  const TempDir dir;
  const auto scenario = dir.write("valm.json", R"({"model": )" + test::kTwoEncoderModel + R"(,
      "cluster": {"base": "dgx-h100", "gpus": 8},
      "training": {"global_batch": 8, "seq_len": 256, "images": 2, "audio_seconds": 4}})");
  const nlohmann::json plans = sweep_and_check_best(
      dir, scenario.string(),
      "tp=2 pp=3 mb=1 zero=0 recompute=none schedule=1f1b sp=0 layout=modality partition=parameters "
      "module_tp=1,2 module_dp=1,2");
  CHECK(plans["considered"] == 1 + 16);
  bool apart = false;
  for (const nlohmann::json& plan : plans["plans"]) {
    if (plan.contains("modules") && plan["modules"].contains("vision") && plan["modules"].contains("audio"))
      apart = apart || plan["modules"]["vision"] != plan["modules"]["audio"];
  }
  CHECK(apart);
}

TEST_CASE("weft sweep takes per-sample data, for a dense model and a VLM", "[cli][sweep][modality]") {
  const TempDir dir;
  const auto dense = dir.write("dense.json", R"({
      "model": {"base": "llama3-8b", "layers": 4}, "cluster": {"base": "dgx-h100", "gpus": 16},
      "training": {"global_batch": 32, "seq_len": 4096},
      "data": {"dataset": "web-text-mix", "seed": 2, "pad_to": 256}})");
  CHECK(sweep_and_check_best(dir, dense.string(), "tp=2,4 pp=1,2 mb=1 zero=1 schedule=1f1b")["feasible"] > 1);
  // The small VLM on 8 GPUs, each DP replica drawing its own samples of the tiled image dataset.
  const auto vlm_scenario = dir.write("vlm.json", R"({"model": )" + test::vlm_model(false, false) + R"(,
      "cluster": {"base": "dgx-h100", "gpus": 8}, "training": {"global_batch": 16, "seq_len": 512},
      "data": {"dataset": "tiled-image-qa", "seed": 3, "pad_to": 128}})");
  const nlohmann::json vlm =
      sweep_and_check_best(dir, vlm_scenario.string(), "tp=1,2 pp=2,4 mb=1 zero=1 recompute=none schedule=1f1b");
  CHECK(vlm["feasible"] > 1);
}

TEST_CASE("bad multimodal grids exit 2 and name the axis", "[cli][sweep][modality][errors]") {
  const TempDir dir;
  auto rejected = [&](const std::string& scenario, const std::string& grid, const std::string& message) {
    const auto run =
        run_weft("sweep '" + scenario + "' --grid '" + grid + "' --csv '" + dir.file("x.csv").string() + "'");
    CHECK(run.exit_code == 2);
    CHECK_THAT(run.err, StartsWith("weft: error: --grid: ") && Contains(message));
    CHECK_FALSE(std::filesystem::exists(dir.file("x.csv")));
  };
  rejected(test::experiment("llama3-8b-4l-1xh100"), "layout=modality", "needs a model of several modules");
  rejected(test::experiment("vlm-s-16xh800"), "layout=pipeline", "expected shared or modality");
  rejected(test::experiment("vlm-s-16xh800"), "partition=flops", "expected even, parameters or time");
  rejected(test::experiment("vlm-s-16xh800"), "module_stages=some", "expected balanced or every");
  rejected(test::experiment("vlm-s-16xh800"), "layout=shared module_dp=2", "'module_dp': modules on meshes");
  rejected(test::experiment("vlm-s-16xh800"), "module_tp=0", "'module_tp=0': expected values of at least 1");
}

}  // namespace
}  // namespace weft
