// What weft measured on H100s on 2026-11-27 and on an H200 on 2026-11-28
// (scenarios/measurements/live/h100-sxm-2026-11-27*/, h200-2026-11-28/: weft bench's suite and each
// scenario's own ops, and weft live's traces of the one-GPU plans of gpt-4l-512, GPT-3 1.3B and
// Llama 3 8B's layers) against what the simulation calibrated on those benches predicts, as
// tools/gpu-check.sh ran it there: the measurements are the independent side, so a change to the
// workload or the cost model that moves a prediction away from the hardware fails here.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <cmath>
#include <filesystem>
#include <map>
#include <string>

#include "tests/support/cli_expectations.hpp"
#include "tests/support/run_command.hpp"

namespace weft {
namespace {

using test::read_file;
using test::run_weft;
using test::TempDir;

const std::string kRecords = std::string(WEFT_SOURCE_DIR) + "/scenarios/measurements/live/";

// weft validate's comparison of the simulation of `scenario`, calibrated on everything the record's
// bench measured (its suite and every scenario's ops, as tools/gpu-check.sh calibrates), with the
// record's measured trace `run` (`<scenario>`, or `<scenario>.repeat-<n>` for a repeated live run);
// without `kernel_gap`, the scenario's option of that name is off.
nlohmann::json compare_run_with_record(const TempDir& dir, const std::string& record, const std::string& scenario,
                                       const std::string& run, bool kernel_gap = true) {
  const std::string folder = kRecords + record + "/";
  const std::string profile = dir.file("profile.json").string();
  std::string measurements;
  for (const auto& entry : std::filesystem::directory_iterator(folder)) {
    const std::string name = entry.path().filename().string();
    if (name == "bench.json" || name.ends_with(".bench.json")) measurements += " '" + entry.path().string() + "'";
  }
  REQUIRE(run_weft("calibrate" + measurements + " -o '" + profile + "'").exit_code == 0);
  const std::string simulated = dir.file(scenario + ".simulated.json").string();
  const std::string comparison = dir.file(scenario + ".validation.json").string();
  std::string scenario_file = test::experiment(scenario);
  if (!kernel_gap) {
    auto json = nlohmann::json::parse(read_file(scenario_file));
    json["options"]["kernel_gap"] = false;
    scenario_file = dir.write(scenario + ".json", json.dump()).string();
  }
  REQUIRE(run_weft("simulate '" + scenario_file + "' --calibration '" + profile + "' --trace '" + simulated + "'")
              .exit_code == 0);
  REQUIRE(run_weft("validate '" + simulated + "' '" + folder + run + ".measured.json' --json '" + comparison + "'")
              .exit_code == 0);
  return nlohmann::json::parse(read_file(comparison))["pairs"][0];
}

nlohmann::json compare_with_record(const TempDir& dir, const std::string& record, const std::string& scenario,
                                   bool kernel_gap = true) {
  return compare_run_with_record(dir, record, scenario, scenario, kernel_gap);
}

double class_error(const nlohmann::json& pair, const std::string& op_class) {
  for (const auto& row : pair["classes"]) {
    if (row["name"] == op_class) return row["error"];
  }
  FAIL("no class " << op_class);
  return 0;
}

// The relative error of the measured compute time of the plan's only stage.
double stage_error(const nlohmann::json& pair) {
  REQUIRE(pair["stages"].size() == 1);
  return pair["stages"][0]["error"];
}

TEST_CASE("the calibrated simulation of GPT-3 1.3B on one H100 is within 10% of weft live there", "[cli][record]") {
  const TempDir dir;
  const nlohmann::json pair = compare_with_record(dir, "h100-sxm-2026-11-27", "gpt3-1.3b-1xh100");
  const double measured_s = pair["iteration"]["measured_s"];
  CHECK(measured_s == Approx(0.3392).epsilon(0.01));  // the record itself: 339.2 ms per iteration
  CHECK(std::abs(static_cast<double>(pair["iteration"]["error"])) <= 0.10);
  CHECK(std::abs(stage_error(pair)) <= 0.05);
  // Every op class within 10%: GEMMs and attention, the bulk of the step, and the memory-bound
  // loss and optimizer, which the scenario's bench times in their own shapes.
  for (const char* op_class :
       {"gemm", "attention_fwd", "attention_bwd", "elementwise", "norm", "embedding", "loss", "optimizer"}) {
    INFO(op_class);
    CHECK(std::abs(class_error(pair, op_class)) <= 0.10);
  }
}

TEST_CASE("on gpt-4l-512 the kernels match the H100 record, the iteration does not without the host", "[cli][record]") {
  // 222 ops of about 15 us each, issued at 18-21 us each: the device waits for the host, which
  // that record's bench did not measure (docs/host-issue.md), so the iteration comes out 19%
  // short while the kernels' time is within a few percent.
  const TempDir dir;
  const nlohmann::json pair = compare_with_record(dir, "h100-sxm-2026-11-27", "gpt-4l-512-1xh100");
  CHECK(std::abs(stage_error(pair)) <= 0.05);
  for (const char* op_class : {"gemm", "attention_fwd", "attention_bwd", "elementwise", "norm", "loss", "optimizer"}) {
    INFO(op_class);
    CHECK(std::abs(class_error(pair, op_class)) <= 0.10);
  }
  CHECK(static_cast<double>(pair["iteration"]["error"]) < -0.10);
}

// Checks that each of the three one-GPU plans, simulated as compare_with_record does, is within
// 10% of `record`'s measured iteration and stage compute; returns each plan's iteration error.
std::map<std::string, double> check_one_gpu_plans_within_10_percent(const TempDir& dir, const std::string& record) {
  std::map<std::string, double> errors;
  for (const char* scenario : {"gpt-4l-512-1xh100", "gpt3-1.3b-1xh100", "llama3-8b-4l-1xh100"}) {
    INFO(scenario);
    const nlohmann::json pair = compare_with_record(dir, record, scenario);
    errors[scenario] = pair["iteration"]["error"];
    CHECK(std::abs(errors[scenario]) <= 0.10);
    CHECK(std::abs(stage_error(pair)) <= 0.10);
  }
  return errors;
}

TEST_CASE("with the host's issue time per op class from the bench, every one-GPU plan is within 10% of weft live",
          "[cli][record][host]") {
  // The record whose bench also timed the host issuing GEMMs, attention and plain kernels
  // (h100-sxm-2026-11-27-host-issue): gpt-4l-512, host-bound, comes within 10% with it.
  const TempDir dir;
  check_one_gpu_plans_within_10_percent(dir, "h100-sxm-2026-11-27-host-issue");
}

TEST_CASE("with the device's gap between kernels from the bench, every one-GPU plan is within 10% of weft live",
          "[cli][record][host][kernel_gap]") {
  // The record whose bench also timed the gap between kernels queued back to back
  // (h100-sxm-2026-11-27-kernel-gap: 1.34 us pooled). gpt-4l-512 runs 222 short kernels an
  // iteration, most of them back to back, so the gaps are a tenth of its iteration.
  const TempDir dir;
  const double with_gap =
      check_one_gpu_plans_within_10_percent(dir, "h100-sxm-2026-11-27-kernel-gap").at("gpt-4l-512-1xh100");
  const double without_gap =
      compare_with_record(dir, "h100-sxm-2026-11-27-kernel-gap", "gpt-4l-512-1xh100", false)["iteration"]["error"];
  CHECK(without_gap < -0.10);
  CHECK(std::abs(with_gap) < std::abs(without_gap) / 1.5);
}

TEST_CASE("the calibrated simulation of Llama 3 8B's layers on one H100 is within 10% of weft live there",
          "[cli][record]") {
  // A Llama layer's kernels: grouped-query attention, SwiGLU, RMSNorm, RoPE. The GPU held 1.63 GHz
  // at its power limit while the bench measured at 1.98 GHz, and the kernels ran a median 7.5%
  // longer than the bench timed them (docs/calibration.md).
  const TempDir dir;
  const nlohmann::json pair = compare_with_record(dir, "h100-sxm-2026-11-27-llama", "llama3-8b-4l-1xh100");
  CHECK(static_cast<double>(pair["iteration"]["measured_s"]) == Approx(0.3400).epsilon(0.01));  // 340.0 ms
  CHECK(std::abs(static_cast<double>(pair["iteration"]["error"])) <= 0.10);
  CHECK(std::abs(stage_error(pair)) <= 0.10);
  for (const char* op_class : {"gemm", "elementwise", "norm", "loss", "optimizer"}) {
    INFO(op_class);
    CHECK(std::abs(class_error(pair, op_class)) <= 0.10);
  }
}

TEST_CASE(
    "the calibrated simulation of GPT-3 1.3B and Llama 3 8B's layers on one H200 is within 10% of weft live there",
    "[cli][record][h200]") {
  // Both compute-bound: the GPU held 1.82 and 1.69 GHz at its 700 W limit while they ran, against
  // the 1.98 GHz the bench measured at (docs/calibration.md, "On an H200").
  const TempDir dir;
  const nlohmann::json gpt = compare_with_record(dir, "h200-2026-11-28", "gpt3-1.3b-1xh200");
  CHECK(static_cast<double>(gpt["iteration"]["measured_s"]) == Approx(0.3317).epsilon(0.01));  // 331.7 ms
  CHECK(std::abs(static_cast<double>(gpt["iteration"]["error"])) <= 0.10);
  CHECK(std::abs(stage_error(gpt)) <= 0.10);
  for (const char* op_class :
       {"gemm", "attention_fwd", "attention_bwd", "elementwise", "norm", "embedding", "loss", "optimizer"}) {
    INFO(op_class);
    CHECK(std::abs(class_error(gpt, op_class)) <= 0.10);
  }
  const nlohmann::json llama = compare_with_record(dir, "h200-2026-11-28", "llama3-8b-4l-1xh200");
  CHECK(static_cast<double>(llama["iteration"]["measured_s"]) == Approx(0.3354).epsilon(0.01));  // 335.4 ms
  CHECK(std::abs(static_cast<double>(llama["iteration"]["error"])) <= 0.10);
  CHECK(std::abs(stage_error(llama)) <= 0.10);
}

TEST_CASE("gpt-4l-512 on the H200: its kernels within 5% in each of four live runs, the iteration short by the host",
          "[cli][record][h200][host]") {
  // The host issued its 222 ops at 17 - 25 us each, more than the bench's classes say (docs/calibration.md):
  // every run's iteration is longer than the simulated one, by 6 - 21%, while the kernels' time holds.
  const TempDir dir;
  for (const char* run : {"gpt-4l-512-1xh200", "gpt-4l-512-1xh200.repeat-1", "gpt-4l-512-1xh200.repeat-2",
                          "gpt-4l-512-1xh200.repeat-3"}) {
    INFO(run);
    const nlohmann::json pair = compare_run_with_record(dir, "h200-2026-11-28", "gpt-4l-512-1xh200", run);
    CHECK(std::abs(stage_error(pair)) <= 0.05);
    CHECK(static_cast<double>(pair["iteration"]["error"]) < -0.05);
  }
}

}  // namespace
}  // namespace weft
