// The whole calibration loop on this machine's CPU: bench -> calibrate -> simulate with the
// profile -> live on two MPI ranks -> validate.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <cmath>
#include <string>
#include <vector>

#include "tests/support/cpu_scenario.hpp"
#include "tests/support/run_command.hpp"

namespace weft {
namespace {

using Catch::Matchers::Contains;
using test::read_file;
using test::run_weft;
using test::run_weft_mpi;
using test::TempDir;

// One pass of the loop in `dir`: bench, calibrate, then per plan simulate with the profile, run it
// live and validate; the validation's JSON.
nlohmann::json run_loop(const TempDir& dir) {
  const std::string d = dir.path().string() + "/";
  const auto bench = run_weft_mpi(2, "bench --quick -o " + d + "m.json --cluster-spec " + d + "cpu.json");
  INFO(bench.err);
  REQUIRE(bench.exit_code == 0);

  const auto calibrate = run_weft("calibrate " + d + "m.json -o " + d + "profile.json");
  INFO(calibrate.err);
  REQUIRE(calibrate.exit_code == 0);
  CHECK_THAT(calibrate.out, Contains("gemm bf16") && Contains("allreduce (2 ranks)") && Contains("send (2 ranks)"));

  // The derived cluster spec, inline, so that the profile's device is the cluster's.
  const std::string cluster = read_file(d + "cpu.json");
  std::string validate_args;
  std::vector<double> simulated;
  for (const char* parallel : {R"({"pp": 2})", R"({"tp": 2})", R"({"dp": 2})"}) {
    INFO(parallel);
    const std::string name = std::string(1, parallel[2]) + "p";
    const auto scenario = dir.write(name + ".json", test::tiny_gpt_scenario(parallel, cluster));
    const auto simulate =
        run_weft("simulate " + scenario.string() + " --calibration " + d + "profile.json --emit-plan " + d + name +
                 ".plan.json --trace " + d + name + ".sim.json");
    INFO(simulate.err);
    REQUIRE(simulate.exit_code == 0);
    const auto live =
        run_weft_mpi(2, "live " + d + name + ".plan.json --warmup 1 --iterations 5 --trace " + d + name + ".live.json");
    INFO(live.err);
    REQUIRE(live.exit_code == 0);
    validate_args += " " + d + name + ".sim.json " + d + name + ".live.json";
    simulated.push_back(nlohmann::json::parse(read_file(d + name + ".plan.json"))["simulated_iteration_ns"]);
  }

  const auto validate = run_weft("validate" + validate_args + " --json " + d + "validation.json");
  INFO(validate.err);
  REQUIRE(validate.exit_code == 0);
  CHECK_THAT(validate.out, Contains("rank correlation"));
  const auto validation = nlohmann::json::parse(read_file(d + "validation.json"));
  REQUIRE(validation["pairs"].size() == 3);
  for (std::size_t i = 0; i < 3; ++i) {
    const auto& iteration = validation["pairs"][i]["iteration"];
    // The simulated side is the plan's simulated iteration; the measured one a real run.
    CHECK(iteration["simulated_s"].get<double>() == Approx(simulated[i] * 1e-9));
    CHECK(iteration["measured_s"].get<double>() > 0.0);
    CHECK(validation["pairs"][i]["classes"].size() >= 5);
  }
  const double correlation = validation["plans"]["rank_correlation"];
  CHECK(correlation >= -1.0);
  CHECK(correlation <= 1.0);
  return validation;
}

bool within_half(const nlohmann::json& validation) {
  for (const auto& pair : validation["pairs"]) {
    if (std::abs(pair["iteration"]["error"].get<double>()) >= 0.5) return false;
  }
  return true;
}

TEST_CASE("bench, calibrate, simulate, live and validate run end to end on two CPU ranks", "[cli][loop][mpi]") {
  // A quick bench and five iterations of a 2-layer model of width 128 on a shared machine: the
  // error swings by tens of percent from run to run (docs/ACCURACY.md has the full loop's; the
  // median of two iterations swung from -52% to +49% in 13 runs, of five from -30% to +9% in 6),
  // and a pause of the machine during the bench or a live run throws one loop off by more (+105%
  // to +286% once). Beyond half either way in three loops in a row, each with its own bench, the
  // model or the executor is broken, not the measurement noisy: a broken one is off every time.
  constexpr int kLoops = 3;
  nlohmann::json validation;
  for (int loop = 1; loop <= kLoops; ++loop) {
    const TempDir dir;
    validation = run_loop(dir);
    if (within_half(validation)) break;
    for (const auto& pair : validation["pairs"]) {
      WARN("loop " << loop << ": " << pair["measured"].get<std::string>() << " off by "
                   << pair["iteration"]["error"].get<double>());
    }
  }
  for (const auto& pair : validation["pairs"]) {
    INFO(pair["measured"].get<std::string>());
    CHECK(std::abs(pair["iteration"]["error"].get<double>()) < 0.5);
  }
}

}  // namespace
}  // namespace weft
