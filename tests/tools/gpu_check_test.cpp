// tools/gpu-check.sh end to end on the CPU backend: bench (the suite and the scenario's ops), calibrate, simulate,
// live, validate, and a report whose verdict follows from the comparison it holds.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <string>

#include "kernels/cpu/cpu_device.hpp"
#include "tests/support/cpu_scenario.hpp"
#include "tests/support/run_command.hpp"

namespace weft {
namespace {

using Catch::Matchers::Contains;
using test::read_file;
using test::run_shell;
using test::TempDir;

const std::string kScript = std::string(WEFT_SOURCE_DIR) + "/tools/gpu-check.sh";

TEST_CASE("gpu-check measures, fits, simulates, runs live and judges the plan", "[cli][gpu-check][mpi]") {
  // A small GPT, data parallel on this machine's two cores, so that the loop takes seconds, under the
  // sanitizers too: the bundled cluster "this-cpu" with its device named as weft bench names a core
  // of this machine (one thread a rank), since a profile prices only the device it was measured on.
  const TempDir dir;
  const auto out = dir.file("check");
  nlohmann::json cluster =
      nlohmann::json::parse(read_file(std::string(WEFT_SOURCE_DIR) + "/scenarios/clusters/this-cpu.json"));
  cluster["gpu"]["name"] = cpu::describe_cpu(1, 2).name;
  const auto scenario = dir.write("tiny-gpt.json", test::tiny_gpt_scenario(R"({"dp": 2})", cluster.dump()));
  const auto run =
      run_shell("'" + kScript + "' --weft '" + test::weft_binary() + "' --backend cpu --quick --scenario '" +
                scenario.string() + "' --launcher '" + test::mpi_launcher(2) + "' '" + out.string() + "'");
  INFO(run.out << run.err);
  REQUIRE((run.exit_code == 0 || run.exit_code == 1));
  const nlohmann::json validation = nlohmann::json::parse(read_file(out / "validation.json"));
  REQUIRE(validation["pairs"].size() == 1);
  const double error = validation["pairs"][0]["iteration"]["error"];
  const bool pass = std::abs(error) <= 0.10;
  CHECK(run.exit_code == (pass ? 0 : 1));
  const std::string report = read_file(out / "report.md");
  CHECK_THAT(report, Contains("## tiny-gpt"));
  CHECK_THAT(report, Contains("| iteration |"));
  CHECK_THAT(report, Contains(pass ? "gpu-check: PASS" : "gpu-check: FAIL"));
  char worst[32];
  std::snprintf(worst, sizeof(worst), "%.1f%%", 100 * std::abs(error));
  CHECK_THAT(report, Contains(std::string("is ") + worst));
  CHECK(std::filesystem::exists(out / "tiny-gpt.measured.json"));
  // Under a launcher the bench measured collectives too, so the profile prices the all-reduce.
  const nlohmann::json profile = nlohmann::json::parse(read_file(out / "profile.json"));
  bool allreduce = false;
  for (const auto& fit : profile["communication"]) allreduce = allreduce || fit["op"] == "allreduce";
  CHECK(allreduce);
  // The scenario's own GEMMs were timed (weft bench --scenario) and the profile prices them as points.
  CHECK(std::filesystem::exists(out / "tiny-gpt.measurements.json"));
  std::size_t points = 0;
  for (const auto& gemm : profile["gemm"]) points += gemm.value("points", nlohmann::json::array()).size();
  CHECK(points > 0);
}

TEST_CASE("gpu-check refuses bad arguments before measuring anything", "[cli][gpu-check][errors]") {
  const TempDir dir;
  const std::string weft = " --weft '" + test::weft_binary() + "' ";
  const auto backend = run_shell("'" + kScript + "'" + weft + "--backend tpu '" + dir.file("a").string() + "'");
  CHECK(backend.exit_code == 2);
  CHECK_THAT(backend.err, Contains("--backend is cuda or cpu, not 'tpu'"));
  const auto no_out = run_shell("'" + kScript + "'" + weft + "--backend cpu");
  CHECK(no_out.exit_code == 2);
  CHECK_THAT(no_out.out, Contains("Usage") || Contains("gpu-check.sh [OPTIONS] OUT_DIR"));
  const auto tolerance = run_shell("'" + kScript + "'" + weft + "--tolerance x '" + dir.file("b").string() + "'");
  CHECK(tolerance.exit_code == 2);
  CHECK_THAT(tolerance.err, Contains("--tolerance must be a positive integer"));
  const auto binary = run_shell("'" + kScript + "' --weft /nonexistent/weft '" + dir.file("c").string() + "'");
  CHECK(binary.exit_code == 2);
  CHECK_THAT(binary.err, Contains("no weft binary at /nonexistent/weft"));
  CHECK_FALSE(std::filesystem::exists(dir.file("a")));
}

}  // namespace
}  // namespace weft
