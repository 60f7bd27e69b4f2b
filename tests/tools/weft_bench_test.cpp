// `weft bench` through the real binary.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <set>

#include "calibration/measurements.hpp"
#include "kernels/bench/bench_suite.hpp"
#include "tests/support/cpu_scenario.hpp"
#include "tests/support/run_command.hpp"

namespace weft {
namespace {

using Catch::Matchers::Contains;
using Catch::Matchers::StartsWith;
using test::read_file;
using test::run_weft;
using test::TempDir;

TEST_CASE("weft bench --quick measures GEMMs and memory-bound ops on one CPU rank", "[cli][bench]") {
  const TempDir dir;
  const auto file = dir.file("m.json");
  const auto run =
      run_weft("bench --quick --parts gemm,memory --samples 2 --sample-ms 0.5 --threads 1 -o '" + file.string() + "'");
  INFO(run.err);
  REQUIRE(run.exit_code == 0);
  const auto json = nlohmann::json::parse(read_file(file));
  CHECK(json["settings"]["sample_ms"] == 0.5);
  CHECK_FALSE(json.contains("host_issue"));  // the CPU's calls run their kernels before returning
  CHECK(json["format"] == "weft-measurements");
  CHECK(json["backend"] == "cpu");
  CHECK_THAT(json["device"].get<std::string>(), Contains("thread"));
  CHECK(json["ranks"] == 1);
  std::size_t gemms = 0;
  for (const auto& m : json["measurements"]) {
    CHECK(m["samples_ns"].size() == 2);
    if (m["op"] != "gemm") continue;
    ++gemms;
    // A rate a CPU core can have (GFLOP/s), even on a loaded machine: between 1 MFLOP/s and 10 TFLOP/s.
    const double flops =
        2.0 * m["shape"]["m"].get<double>() * m["shape"]["n"].get<double>() * m["shape"]["k"].get<double>();
    const double rate = flops / m["median_ns"].get<double>();
    CHECK(rate > 1e-3);
    CHECK(rate < 1e4);
  }
  // bf16 and fp32: the 2 x 2 x 2 grid (nn), its two cubes in layouts nt and tn, two held-out shapes
  CHECK(gemms == 2 * (8 + 2 * 2 + 2));

  // The cases ran in a random order; the file lists them as the suite does.
  SuiteOptions suite;
  suite.quick = true;
  suite.dtypes = {Dtype::bf16, Dtype::fp32};
  suite.parts = {BenchPart::gemm, BenchPart::memory};
  const std::vector<BenchCase> cases = bench_cases(suite);
  const JsonDocument document = JsonDocument::parse_text(read_file(file), "m.json");
  const std::vector<Measurement> listed = read_measurements(document.root()).measurements;
  REQUIRE(listed.size() == cases.size());
  for (std::size_t i = 0; i < cases.size(); ++i) {
    CHECK(listed[i].op == cases[i].op);
    CHECK(listed[i].dtype == cases[i].dtype);
    CHECK(listed[i].shape == cases[i].shape);
    if (cases[i].op != OpClass::gemm) continue;
    CHECK(listed[i].kernel == cases[i].kernel);
    CHECK(listed[i].grid == cases[i].grid);
  }
}

TEST_CASE("weft bench --scenario times the ops of a plan, which calibrate fits with a suite", "[cli][bench]") {
  const TempDir dir;
  const auto scenario = dir.write("tiny.json", test::tiny_gpt_scenario(R"({"tp": 1})"));
  const auto ops = dir.file("ops.json");
  const auto run =
      run_weft("bench --scenario '" + scenario.string() + "' --samples 2 --threads 1 -o '" + ops.string() + "'");
  INFO(run.err);
  REQUIRE(run.exit_code == 0);
  CHECK_THAT(run.out, Contains("cases of " + scenario.string()));
  const JsonDocument document = JsonDocument::parse_text(read_file(ops), "ops.json");
  std::set<Kernel> layouts;
  for (const Measurement& m : read_measurements(document.root()).measurements) {
    CHECK_FALSE(m.label.empty());
    if (m.op != OpClass::gemm) continue;
    layouts.insert(m.kernel);
    CHECK_FALSE(m.grid);
  }
  CHECK(layouts == std::set<Kernel>{Kernel::nn, Kernel::nt, Kernel::tn});

  // Alone the file has no GEMM grid; with a suite's it fits a profile.
  const auto suite = dir.file("suite.json");
  REQUIRE(run_weft("bench --quick --parts gemm,attention,memory --samples 2 --threads 1 -o '" + suite.string() + "'")
              .exit_code == 0);
  const auto profile = dir.file("profile.json");
  const auto fit = run_weft("calibrate '" + suite.string() + "' '" + ops.string() + "' -o '" + profile.string() + "'");
  INFO(fit.err);
  CHECK(fit.exit_code == 0);
}

TEST_CASE("weft bench --scenario refuses bad input with exit status 2", "[cli][bench]") {
  const TempDir dir;
  const std::string out = " -o '" + dir.file("m.json").string() + "'";
  const auto missing = run_weft("bench --scenario '" + dir.file("none.json").string() + "'" + out);
  CHECK(missing.exit_code == 2);
  CHECK_THAT(missing.err, Contains("none.json"));
  const auto scenario = dir.write("tiny.json", test::tiny_gpt_scenario(R"({"tp": 3})"));
  const auto bad = run_weft("bench --scenario '" + scenario.string() + "'" + out);
  CHECK(bad.exit_code == 2);
  CHECK_THAT(bad.err, Contains("tiny.json: parallel: tp x cp x pp = 3"));
  dir.write("tiny.json", test::tiny_gpt_scenario(R"({"tp": 1})"));
  const auto dtypes = run_weft("bench --scenario '" + scenario.string() + "' --dtypes fp32" + out);
  CHECK(dtypes.exit_code == 2);
  CHECK_THAT(dtypes.err, Contains("--dtypes: does not apply with --scenario"));
  const auto nothing = run_weft("bench --scenario '" + scenario.string() + "' --parts p2p" + out);
  CHECK(nothing.exit_code == 2);
  CHECK_THAT(nothing.err, Contains("runs no op of the parts --parts names (p2p)"));
  CHECK_FALSE(std::filesystem::exists(dir.file("m.json")));
}

TEST_CASE("weft bench refuses what it cannot do, with exit status 2", "[cli][bench]") {
  const TempDir dir;
  const auto file = dir.file("m.json");
  const std::string out = " -o '" + file.string() + "'";
  const auto parts = run_weft("bench --quick --parts gemm,banana" + out);
  CHECK(parts.exit_code == 2);
  CHECK_THAT(parts.err, StartsWith("weft: error: --parts: 'banana' is not one of gemm, attention, memory"));
  for (const std::string length : {"0", "-1", "1001", "nan"}) {
    const auto sample = run_weft("bench --quick --sample-ms " + length + out);
    CHECK(sample.exit_code == 2);
    CHECK_THAT(sample.err, StartsWith("weft: error: --sample-ms: expected a length above 0 and at most 1000 ms"));
  }
  const auto alone = run_weft("bench --quick --parts collectives" + out);
  CHECK(alone.exit_code == 2);
  CHECK_THAT(alone.err, Contains("nothing to measure with one rank"));
  const auto directory = run_weft("bench --quick -o '" + dir.file("missing/m.json").string() + "'");
  CHECK(directory.exit_code == 2);
  CHECK_THAT(directory.err, Contains("-o: cannot write"));
  CHECK_FALSE(std::filesystem::exists(file));
}

TEST_CASE("weft bench keys communication by placement: a pair inside a node and one across two", "[cli][bench][mpi]") {
  const TempDir dir;
  const auto file = dir.file("m.json");
  const auto spec = dir.file("cluster.json");
  // The memory-bound op gives the derived cluster a bandwidth however noisy the quick sends' fit.
  const auto run = test::run_weft_mpi(4,
                                      "bench --quick --parts p2p,memory --dtypes bf16 --samples 2 --threads 1 "
                                      "--ranks-per-node 2 -o '" +
                                          file.string() + "' --cluster-spec '" + spec.string() + "'");
  INFO(run.err);
  REQUIRE(run.exit_code == 0);
  const auto json = nlohmann::json::parse(read_file(file));
  CHECK(json["ranks"] == 4);
  CHECK(json["ranks_per_node"] == 2);
  std::set<int> placements;
  for (const auto& m : json["measurements"]) {
    if (m["op"] != "send") continue;
    CHECK(m["shape"]["group_size"] == 2);
    placements.insert(m["shape"]["ranks_per_node"].get<int>());
  }
  CHECK(placements == std::set<int>{1, 2});
  // The derived cluster keeps the two nodes apart, so that a group across them crosses its network.
  const auto cluster = nlohmann::json::parse(read_file(spec));
  CHECK(cluster["gpus"] == 4);
  CHECK(cluster["gpus_per_node"] == 2);
  const auto uneven = test::run_weft_mpi(4, "bench --quick --parts p2p --ranks-per-node 3 -o '" + file.string() + "'");
  CHECK(uneven.exit_code == 2);
  CHECK_THAT(uneven.err, Contains("--ranks-per-node: expected a divisor of the job's 4 ranks, got 3"));
}

TEST_CASE("weft bench --backend cuda says why it cannot run here", "[cli][bench]") {
  const auto info = run_weft("info");
  if (info.out.find("kernel self-test: passed") != std::string::npos) return;  // a GPU: nothing to check here
  const auto run = run_weft("bench --backend cuda --quick");
  CHECK(run.exit_code == 2);
  CHECK_THAT(run.err, StartsWith("weft: error: --backend cuda: "));
  CHECK(std::count(run.err.begin(), run.err.end(), '\n') == 1);
}

}  // namespace
}  // namespace weft
