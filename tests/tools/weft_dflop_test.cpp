// `weft dflop` on the bundled DFLOP scenario, through the real binary.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <string>

#include "tests/support/cli_expectations.hpp"
#include "tests/support/run_command.hpp"

namespace weft {
namespace {

using Catch::Matchers::Contains;
using test::quoted;
using test::read_file;
using test::run_weft;
using test::TempDir;

const std::string kDflop = test::experiment("dflop-llava-ov-llama3-8b-32xa100");

// The report without what differs run to run: the wall-clock times.
nlohmann::json without_timings(nlohmann::json report) {
  report.erase("timings_ms");
  for (auto& step : report["scheduler"]) step.erase("solve_ms");
  return report;
}

TEST_CASE("weft dflop profiles, plans, schedules and runs the bundled LLaVA-OV scenario", "[cli][dflop]") {
  const TempDir dir;
  const auto run = run_weft("dflop '" + kDflop + "' --iterations 2 --json " + quoted(dir.file("d.json")));
  INFO(run.err);
  REQUIRE(run.exit_code == 0);
  CHECK_THAT(run.out, Contains("32 GPUs (8 per node, 80.00 GiB each), 256 samples an iteration") &&
                          Contains("Adaptive correction") && Contains("Planning overhead (Table 4)") &&
                          Contains("Data Profiler: 2048 samples drawn") && Contains("Model Profiler:") &&
                          Contains("Algorithm 1") && Contains("Online microbatch scheduler") &&
                          Contains("DFLOP's layout and online scheduler (DFLOP)"));
  const auto json = nlohmann::json::parse(read_file(dir.file("d.json")));
  const auto& best = json["dflop"]["best"];
  auto gpus = [](const nlohmann::json& layout) {
    return layout["tp"].get<int>() * layout["pp"].get<int>() * layout["dp"].get<int>();
  };
  CHECK(gpus(best["encoder"]) + gpus(best["llm"]) == 32);
  CHECK(best["encoder_memory_bytes"].get<double>() <= json["memory_bytes"].get<double>());
  CHECK(best["llm_memory_bytes"].get<double>() <= json["memory_bytes"].get<double>());
  CHECK(best["expected_iteration_s"].get<double>() <= json["uniform"]["best"]["expected_iteration_s"].get<double>());
  // Every run covers both batches; the scheduler splits each batch into N_mb x L_dp buckets of all
  // 256 samples.
  REQUIRE(json["runs"].size() == 5);
  for (const auto& r : json["runs"]) {
    REQUIRE(r["iteration_s"].size() == 2);
    CHECK(r["samples_per_s"].get<double>() == Approx(256.0 / r["mean_iteration_s"].get<double>()));
  }
  for (const auto& step : json["scheduler"]) {
    CHECK(step["buckets"].size() ==
          static_cast<std::size_t>(best["microbatches"].get<int>() * best["llm"]["dp"].get<int>()));
    std::size_t samples = 0;
    for (const auto& bucket : step["buckets"]) samples += bucket.size();
    CHECK(samples == 256);
    CHECK(step["c_max_s"].get<double>() <= step["random_c_max_s"].get<double>());
  }
  SECTION("each layout runs op by op, close to the stage model on the same samples") {
    CHECK_THAT(run.out, Contains("Each layout op by op (weft simulate, each component on a mesh of its own)"));
    // The scenario's layout, the best uniform one and DFLOP's: three, or fewer where two coincide.
    const auto& full = json["full_simulation"];
    REQUIRE(full.size() >= 2);
    CHECK(full.back()["layout"].get<std::string>().find("DFLOP's layout") != std::string::npos);
    for (const auto& layout : full) {
      INFO(layout.dump());
      REQUIRE(layout["iteration_s"].is_number());
      // Two implementations of one layout: within 5% of each other.
      CHECK(layout["iteration_s"].get<double>() == Approx(layout["stage_model_s"].get<double>()).epsilon(0.05));
      const int buckets = layout["plan"]["microbatches"].get<int>() * layout["plan"]["llm"]["dp"].get<int>();
      CHECK(layout["samples"].get<int>() % buckets == 0);
      CHECK(layout["samples"].get<int>() >= 256);
      CHECK(layout["samples"].get<int>() < 256 + buckets);
    }
  }
  SECTION("anomalies are reported and slow the runs") {
    const auto slowed =
        run_weft("dflop '" + kDflop + "' --iterations 2 --anomalies 0.05,1 --json " + quoted(dir.file("a.json")));
    REQUIRE(slowed.exit_code == 0);
    CHECK_THAT(slowed.out, Contains("Anomalies: 5.0% of the shapes delayed by 100% of the largest expected stage"));
    const auto anomalous = nlohmann::json::parse(read_file(dir.file("a.json")));
    CHECK(anomalous["anomalies"]["rate"] == 0.05);
    for (std::size_t k = 0; k < 5; ++k) {
      CHECK(anomalous["runs"][k]["mean_iteration_s"].get<double>() >=
            json["runs"][k]["mean_iteration_s"].get<double>());
    }
  }
  SECTION("a node budget replaces the time limit unless both are given") {
    CHECK_THAT(run.out, Contains("Online microbatch scheduler (CBC's ILP within 1 s a batch, else LPT)"));
    CHECK(json["scheduler_limits"] == nlohmann::json{{"seconds", 1.0}, {"nodes", 0}});
    const auto budget =
        run_weft("dflop '" + kDflop + "' --iterations 1 --ilp-nodes 5 --json " + quoted(dir.file("n.json")));
    REQUIRE(budget.exit_code == 0);
    CHECK_THAT(budget.out, Contains("Online microbatch scheduler (CBC's ILP within 5 nodes a batch, else LPT)"));
    CHECK(nlohmann::json::parse(read_file(dir.file("n.json")))["scheduler_limits"] ==
          nlohmann::json{{"seconds", 0.0}, {"nodes", 5}});
    const auto both = run_weft("dflop '" + kDflop + "' --iterations 1 --ilp-nodes 5 --ilp-seconds 2");
    REQUIRE(both.exit_code == 0);
    CHECK_THAT(both.out, Contains("(CBC's ILP within 2 s and 5 nodes a batch, else LPT)"));
  }
  SECTION("the same scenario gives the same report") {
    const auto again = run_weft("dflop '" + kDflop + "' --iterations 2 --json " + quoted(dir.file("e.json")));
    REQUIRE(again.exit_code == 0);
    CHECK(without_timings(nlohmann::json::parse(read_file(dir.file("e.json")))) == without_timings(json));
  }
}

TEST_CASE("weft dflop times a scenario whose modules have meshes of their own as its layout", "[cli][dflop][meshes]") {
  const TempDir dir;
  // DFLOP's layout for this model (the bundled run's), written into the scenario: the encoder at
  // TP1 DP2 on 2 GPUs, the LLM at TP2 PP3 DP5 on 30; 240 samples, 48 slots of 5.
  auto scenario = nlohmann::json::parse(read_file(kDflop));
  scenario["parallel"] = nlohmann::json::parse(R"({"tp": 2, "pp": 4, "dp": 5, "schedule": "1f1b", "recompute": "full",
      "modality_stages": {"vision": 1, "language": 3}, "modules": {"vision": {"tp": 1, "dp": 2}}})");
  scenario["training"]["global_batch"] = 240;
  const auto file = dir.write("meshes.json", scenario.dump());
  const auto run = run_weft("dflop " + quoted(file) + " --iterations 1 --json " + quoted(dir.file("d.json")));
  INFO(run.err);
  REQUIRE(run.exit_code == 0);
  const auto json = nlohmann::json::parse(read_file(dir.file("d.json")));
  const auto& given = json["runs"][0];
  CHECK(given["name"] == "the scenario's layout, random split");
  CHECK(given["plan"]["encoder"] == nlohmann::json({{"tp", 1}, {"pp", 1}, {"dp", 2}}));
  CHECK(given["plan"]["llm"] == nlohmann::json({{"tp", 2}, {"pp", 3}, {"dp", 5}}));
  CHECK(given["plan"]["microbatches"] == 48);
  const auto& full = json["full_simulation"][0];
  CHECK(full["layout"].get<std::string>().rfind("the scenario's layout", 0) == 0);
  CHECK(full["iteration_s"].is_number());
  // weft simulate runs the layout on the scenario's samples: each of the 2 encoder replicas and
  // each of the LLM's 3 stages of its 5 replicas simulated.
  const auto simulated = run_weft("simulate " + quoted(file));
  INFO(simulated.err);
  CHECK(simulated.exit_code == 0);
  CHECK_THAT(simulated.out, Contains("17 simulated ranks (one per pipeline stage of each DP replica)"));
}

TEST_CASE("weft dflop refuses bad input with exit 2 and leaves no file", "[cli][dflop]") {
  const TempDir dir;
  const auto rejects = [&](const std::string& arguments, const std::string& message) {
    const auto run = run_weft("dflop " + arguments + " --json " + quoted(dir.file("d.json")));
    CHECK(run.exit_code == 2);
    CHECK_THAT(run.err, Contains(message));
    CHECK(run.out.empty());
    CHECK_FALSE(std::filesystem::exists(dir.file("d.json")));
  };
  auto scenario = nlohmann::json::parse(read_file(kDflop));
  auto no_data = scenario;
  no_data.erase("data");
  no_data["training"]["images"] = 4;
  rejects(quoted(dir.write("no-data.json", no_data.dump())), "needs a \"data\" section");
  rejects("'" + test::experiment("llama3-8b-4l-1xh100") + "'",
          "model: DFLOP plans an encoder component and a language model");
  rejects("'" + kDflop + "' --iterations 0", "--iterations");
  rejects("'" + kDflop + "' --ilp-seconds 0", "--ilp-seconds");
  rejects("'" + kDflop + "' --ilp-nodes 0", "--ilp-nodes");
  rejects("'" + kDflop + "' --profile-samples 0", "--profile-samples");
  rejects("'" + kDflop + "' --calibration nowhere.json", "nowhere.json");
  rejects("'" + kDflop + "' --anomalies 0.5", "--anomalies");
  rejects("'" + kDflop + "' --anomalies 2,1", "--anomalies: expected a share of the shapes from 0 to 1, got 2");
  rejects("'" + kDflop + "' --anomalies 0.1,-1", "--anomalies");
  rejects("'" + kDflop + "' --correction-cost 2", "--correction-cost");
  rejects("'" + kDflop + "' --correction-window 0", "--correction-window");
  rejects(quoted(dir.file("missing.json")), "missing.json");
  const auto missing = run_weft("dflop");
  CHECK(missing.exit_code == 2);
}

}  // namespace
}  // namespace weft
