// What weft measured on an H100 on 2026-11-26 (scenarios/measurements/live/h100-sxm-2026-11-26/:
// weft bench's file, and weft live's traces of the one-GPU plans of gpt-4l-512 and GPT-3 1.3B)
// against what the simulation calibrated on that bench predicts: the measurements are the
// independent side, so a change to the workload or the cost model that moves a prediction away
// from the hardware fails here.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <cmath>
#include <filesystem>
#include <string>

#include "tests/support/cli_expectations.hpp"
#include "tests/support/run_command.hpp"

namespace weft {
namespace {

using test::read_file;
using test::run_weft;
using test::TempDir;

const std::string kRecord = std::string(WEFT_SOURCE_DIR) + "/scenarios/measurements/live/h100-sxm-2026-11-26/";

// weft validate's comparison of the calibrated simulation of `scenario` with its measured trace.
nlohmann::json compare_with_record(const TempDir& dir, const std::string& scenario) {
  const std::string profile = dir.file("profile.json").string();
  if (!std::filesystem::exists(profile)) {
    REQUIRE(run_weft("calibrate '" + kRecord + "bench.json' -o '" + profile + "'").exit_code == 0);
  }
  const std::string simulated = dir.file(scenario + ".simulated.json").string();
  const std::string comparison = dir.file(scenario + ".validation.json").string();
  REQUIRE(run_weft("simulate '" + test::experiment(scenario) + "' --calibration '" + profile + "' --trace '" +
                   simulated + "'")
              .exit_code == 0);
  REQUIRE(
      run_weft("validate '" + simulated + "' '" + kRecord + scenario + ".measured.json' --json '" + comparison + "'")
          .exit_code == 0);
  return nlohmann::json::parse(read_file(comparison))["pairs"][0];
}

double class_error(const nlohmann::json& pair, const std::string& op_class) {
  for (const auto& row : pair["classes"]) {
    if (row["name"] == op_class) return row["error"];
  }
  FAIL("no class " << op_class);
  return 0;
}

TEST_CASE("the calibrated simulation of GPT-3 1.3B on one H100 is within 10% of weft live there", "[cli][record]") {
  const TempDir dir;
  const nlohmann::json pair = compare_with_record(dir, "gpt3-1.3b-1xh100");
  const double measured_s = pair["iteration"]["measured_s"];
  CHECK(measured_s == Approx(0.3175).epsilon(0.01));  // the record itself: 317.5 ms per iteration
  CHECK(std::abs(static_cast<double>(pair["iteration"]["error"])) <= 0.10);
  // GEMMs and attention, the bulk of the step, closer still; the memory-bound loss and optimizer
  // are where the bench's one memory-bound kernel shape misses (docs/calibration.md).
  CHECK(std::abs(class_error(pair, "gemm")) <= 0.05);
  CHECK(std::abs(class_error(pair, "attention_fwd")) <= 0.10);
  CHECK(std::abs(class_error(pair, "attention_bwd")) <= 0.10);
}

TEST_CASE("on gpt-4l-512 the GEMMs match the H100 record", "[cli][record]") {
  // Its iteration does not (-43%): 219 ops of about 13 us each, issued at 11 to 15 us each, keep
  // the device waiting for the host, which the simulation's 2 us per launch does not model
  // (docs/live.md).
  const TempDir dir;
  const nlohmann::json pair = compare_with_record(dir, "gpt-4l-512-1xh100");
  CHECK(std::abs(class_error(pair, "gemm")) <= 0.10);
}

}  // namespace
}  // namespace weft
