// `weft validate` through the real binary, on traces written by hand.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "tests/support/run_command.hpp"

namespace weft {
namespace {

using Catch::Matchers::Contains;
using test::read_file;
using test::run_weft;
using test::TempDir;

// A trace of one pipeline stage: `ranks` rank processes, each with a compute thread holding a
// GEMM of `gemm_us` and a norm of `norm_us`, and an iteration of `makespan_ns`.
std::string trace(int ranks, double gemm_us, double norm_us, std::int64_t makespan_ns) {
  nlohmann::json events = nlohmann::json::array();
  for (int r = 0; r < ranks; ++r) {
    events.push_back({{"name", "process_name"},
                      {"ph", "M"},
                      {"pid", r + 1},
                      {"tid", 0},
                      {"args", {{"name", "stage 0 / tp " + std::to_string(r) + " / dp 0 (x)"}}}});
    events.push_back(
        {{"name", "thread_name"}, {"ph", "M"}, {"pid", r + 1}, {"tid", 1}, {"args", {{"name", "compute"}}}});
    events.push_back({{"name", "g"},
                      {"ph", "X"},
                      {"pid", r + 1},
                      {"tid", 1},
                      {"ts", 0},
                      {"dur", gemm_us},
                      {"args", {{"class", "gemm"}}}});
    events.push_back({{"name", "n"},
                      {"ph", "X"},
                      {"pid", r + 1},
                      {"tid", 1},
                      {"ts", gemm_us},
                      {"dur", norm_us},
                      {"args", {{"class", "norm"}}}});
  }
  return nlohmann::json({{"otherData", {{"makespan_ns", makespan_ns}}}, {"traceEvents", events}}).dump();
}

TEST_CASE("weft validate compares iteration, stage and class times and ranks plans", "[cli][validate]") {
  const TempDir dir;
  // Plan a: simulated 1 ms, measured 1.25 ms (two ranks of 1000 and 1500 us of GEMM: mean 1250).
  const auto sim_a = dir.write("sim_a.json", trace(1, 900, 100, 1'000'000));
  nlohmann::json measured = nlohmann::json::parse(trace(2, 1000, 100, 1'250'000));
  for (auto& e : measured["traceEvents"]) {
    if (e["name"] == "g" && e["pid"] == 2) e["dur"] = 1500;
  }
  const auto real_a = dir.write("real_a.json", measured.dump());
  // Plan b: simulated 2 ms, measured 2 ms.
  const auto sim_b = dir.write("sim_b.json", trace(1, 1800, 200, 2'000'000));
  const auto real_b = dir.write("real_b.json", trace(1, 1800, 200, 2'000'000));
  const auto json = dir.file("v.json");
  const auto run = run_weft("validate '" + sim_a.string() + "' '" + real_a.string() + "' '" + sim_b.string() + "' '" +
                            real_b.string() + "' --json '" + json.string() + "'");
  INFO(run.err);
  REQUIRE(run.exit_code == 0);
  CHECK_THAT(run.out, Contains("-20.0%") && Contains("order agrees"));
  const auto v = nlohmann::json::parse(read_file(json));
  CHECK(v["pairs"][0]["iteration"]["error"].get<double>() == Approx(-0.2));
  // Stage 0's compute per rank: simulated 1000 us, measured (1100 + 1600) / 2 = 1350 us.
  CHECK(v["pairs"][0]["stages"][0]["measured_s"].get<double>() == Approx(1350e-6));
  CHECK(v["pairs"][0]["stages"][0]["simulated_s"].get<double>() == Approx(1000e-6));
  CHECK(v["pairs"][0]["classes"][0]["name"] == "gemm");
  CHECK(v["pairs"][0]["classes"][0]["measured_s"].get<double>() == Approx(1250e-6));
  CHECK(v["plans"]["rank_correlation"].get<double>() == Approx(1.0));
  CHECK(v["plans"]["order_agrees"] == true);
  CHECK(v["plans"]["mean_abs_iteration_error"].get<double>() == Approx(0.1));
  // Plan a's two measured ranks computed 1100 and 1600 us: 500 / 1100 apart; plan b has one rank.
  CHECK(v["pairs"][0]["measured_rank_spread"].get<double>() == Approx(500.0 / 1100.0));
  CHECK(v["pairs"][1]["measured_rank_spread"].get<double>() == 0.0);
  CHECK(v["pairs"][0]["measured_disturbed"] == true);
  CHECK(v["pairs"][1]["measured_disturbed"] == false);
  CHECK_THAT(run.out, Contains("differ by up to 45.5% in compute time"));
  // Single measured iterations (no otherData.measured): 1.25 ms and 2 ms are told apart.
  CHECK(v["plans"]["resolved_pairs"] == 1);
  CHECK(v["plans"]["resolved_pairs_ordered_alike"] == 1);

  // Measured iterations from 1.2 to 2.1 ms for plan a overlap plan b's 2 ms.
  measured["otherData"]["measured"] = {{"iteration_ns", {1'200'000, 1'250'000, 2'100'000}}};
  const auto noisy_a = dir.write("noisy_a.json", measured.dump());
  const auto noisy = run_weft("validate '" + sim_a.string() + "' '" + noisy_a.string() + "' '" + sim_b.string() +
                              "' '" + real_b.string() + "'");
  REQUIRE(noisy.exit_code == 0);
  CHECK_THAT(noisy.out, Contains("do not overlap): 0 of 1;"));
}

TEST_CASE("weft validate says when a pipeline's stages computed at different rates than simulated", "[cli][validate]") {
  const TempDir dir;
  // Two stages of one rank each: the second rank is relabelled as stage 1.
  auto pipeline = [](double stage1_gemm_us) {
    nlohmann::json t = nlohmann::json::parse(trace(2, 900, 100, 2'000'000));
    for (auto& e : t["traceEvents"]) {
      if (e["pid"] == 2 && e["name"] == "process_name") e["args"]["name"] = "stage 1 / tp 0 / dp 0 (x)";
      if (e["pid"] == 2 && e["name"] == "g") e["dur"] = stage1_gemm_us;
    }
    return t.dump();
  };
  const auto sim = dir.write("sim.json", pipeline(900));
  // Stage 1 computed 1100 + 100 us against 900 + 100 simulated, stage 0 as simulated: 20% apart.
  const auto real = dir.write("real.json", pipeline(1100));
  const auto json = dir.file("v.json");
  const auto run = run_weft("validate '" + sim.string() + "' '" + real.string() + "' --json '" + json.string() + "'");
  INFO(run.err);
  REQUIRE(run.exit_code == 0);
  CHECK_THAT(run.out, Contains("the stages computed at rates 20.0% apart"));
  CHECK_FALSE(Contains("differ by up to").match(run.out));
  const auto v = nlohmann::json::parse(read_file(json));
  CHECK(v["pairs"][0]["measured_stage_rate_spread"].get<double>() == Approx(0.2));
  CHECK(v["pairs"][0]["measured_rank_spread"].get<double>() == 0.0);
  CHECK(v["pairs"][0]["measured_disturbed"] == true);
}

TEST_CASE("weft validate rejects what is not a pair of weft traces", "[cli][validate]") {
  const TempDir dir;
  const auto sim = dir.write("sim.json", trace(1, 1, 1, 10));
  const auto odd = run_weft("validate '" + sim.string() + "'");
  CHECK(odd.exit_code == 2);
  CHECK_THAT(odd.err, Contains("expected pairs of traces, SIMULATED MEASURED, got 1 files"));
  const auto other = dir.write("other.json", R"({"traceEvents": []})");
  const auto run = run_weft("validate '" + sim.string() + "' '" + other.string() + "'");
  CHECK(run.exit_code == 2);
  CHECK_THAT(run.err, Contains("other.json: otherData: missing required field") ||
                          Contains("other.json: (top level): missing required field 'otherData'"));
}

}  // namespace
}  // namespace weft
