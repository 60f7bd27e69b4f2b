// Inputs that would make weft allocate without bound are refused up front, with the cause named.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "tests/support/cli_expectations.hpp"
#include "tests/support/run_command.hpp"

namespace weft {
namespace {

using Catch::Matchers::Contains;
using test::run_weft;

std::string llama_70b_with(const std::string& training,
                           const std::string& options = R"({"framework_overhead_GiB": 3})") {
  return R"({"model": "llama3-70b", "cluster": {"base": "dgx-h100", "gpus": 1024},
    "parallel": {"tp": 8, "pp": 4, "dp": 32, "schedule": "1f1b", "sequence_parallel": true, "zero": 1},
    "training": )" +
         training + R"(, "options": )" + options + "}";
}

TEST_CASE("global batches of 10^9 and 2^31 samples get the size message, not an allocation", "[cli][size]") {
  test::expect_simulate_rejects(
      llama_70b_with(R"({"global_batch": 1000000000, "seq_len": 8192})"),
      "training.global_batch: 1,000,000,000 samples make 31,250,000 microbatches on each of 4 simulated ranks, about");
  test::expect_simulate_rejects(
      llama_70b_with(R"({"global_batch": 2147483648, "seq_len": 8192})"),
      "training.global_batch: 2,147,483,648 samples make 67,108,864 microbatches on each of 4 simulated ranks");
  test::expect_simulate_rejects(llama_70b_with(R"({"global_batch": 2147483648, "seq_len": 8192})"),
                                "(half of this machine's");
}

TEST_CASE("a limit set with --max-ops is named in the message", "[cli][size]") {
  test::expect_simulate_rejects(llama_70b_with(R"({"global_batch": 512, "seq_len": 8192})"),
                                "the limit is 1,000 ops (--max-ops)", "--max-ops 1000");
  const auto run = run_weft("simulate '" + test::experiment("llama3-70b-1024xh100") + "' --max-ops 0");
  CHECK(run.exit_code == 2);
  CHECK_THAT(run.err, Contains("--max-ops"));
}

TEST_CASE("sizes whose products would overflow are refused where they are read", "[cli][size][overflow]") {
  test::expect_simulate_rejects(llama_70b_with(R"({"global_batch": 137438953472, "seq_len": 8192})"),
                                "training.global_batch: expected at most 68719476736 samples");
  test::expect_simulate_rejects(
      llama_70b_with(R"({"global_batch": 512, "micro_batch": 4611686018427387904, "seq_len": 8192})"),
      "training.micro_batch: 4611686018427387904 samples of 8192 tokens are more than 16777216 "
      "tokens in a microbatch");
  test::expect_simulate_rejects(
      llama_70b_with(R"({"global_batch": 512, "seq_len": 8192})", R"({"framework_overhead_GiB": 1e300})"),
      "options.framework_overhead_GiB: expected at most 1048576 GiB");
}

TEST_CASE("a graph scenario of more ops than the limit is refused before it is built", "[cli][size]") {
  std::ifstream in(std::string(WEFT_SOURCE_DIR) + "/scenarios/experiments/graph-pipeline-2x2.json");
  std::stringstream text;
  text << in.rdbuf();
  test::expect_simulate_rejects(text.str(), "ops: 40 ops, about 0.0 GB to hold; the limit is 10 ops (--max-ops)",
                                "--max-ops 10");
}

TEST_CASE("a scenario file too large to read is refused at once", "[cli][size]") {
  const test::TempDir dir;
  const auto file = dir.file("huge.json");
  { std::ofstream create(file); }
  std::filesystem::resize_file(file, std::uintmax_t{1} << 40);  // sparse: 1 TiB of size, no disk
  const auto run = run_weft("simulate '" + file.string() + "'");
  CHECK(run.exit_code == 2);
  CHECK_THAT(run.err, Contains("1048576 MiB would take about 10240 GiB to read"));
}

TEST_CASE("a sweep that would take too long is refused before it simulates, naming --grid", "[cli][size]") {
  const test::TempDir dir;
  const auto csv = dir.file("plans.csv");
  const auto run = run_weft("sweep '" + test::experiment("llama3-70b-1024xh100") +
                            "' --grid 'pp=1..8 cp=1,2 vpp=1,2,4' --max-minutes 0.001 --csv '" + csv.string() + "'");
  CHECK(run.exit_code == 2);
  CHECK_THAT(run.err, Contains("--grid: 972 plans to simulate would take at least") &&
                          Contains("more than --max-minutes 0.001; narrow the grid with --grid"));
  CHECK(run.out.empty());
  CHECK_FALSE(std::filesystem::exists(csv));
}

TEST_CASE("sweep plans over the op limit are set aside as invalid, the others ranked", "[cli][size]") {
  const auto run = run_weft("sweep '" + test::experiment("llama3-70b-1024xh100") +
                            "' --grid 'tp=8 pp=4,8 cp=1 vpp=1 mb=1,2 zero=1 recompute=none' --max-ops 14000");
  REQUIRE(run.exit_code == 0);
  // The plans with more microbatches or more stages are over; the others are simulated and fit.
  CHECK_THAT(run.out, Contains("24 considered: 6 invalid") && Contains("6 x graph over the op limit (--max-ops)") &&
                          Contains("6 fit"));
  const auto unlimited = run_weft("sweep '" + test::experiment("llama3-70b-1024xh100") +
                                  "' --grid 'tp=8 pp=4,8 cp=1 vpp=1 mb=1,2 zero=1 recompute=none'");
  CHECK_THAT(unlimited.out, Contains("24 considered: 0 invalid") && Contains("10 fit"));
}

TEST_CASE("weft plan refuses unbounded budgets and graphs over the limit", "[cli][size]") {
  const std::string scenario = "'" + test::experiment("cpu-vlm-pp2-dip") + "'";
  for (const auto& [flags, message] :
       {std::pair{"--time-budget 1e300", "--time-budget: expected seconds > 0 and at most 86400 (a day)"},
        std::pair{"--iterations 10000000000",
                  "--iterations: expected an integer from 1 to 1000000000, got '10000000000'"},
        std::pair{"--memory-limit-gib 1e300", "--memory-limit-gib: 1e+300 is out of range"},
        std::pair{"--max-ops 10", "the limit is 10 ops (--max-ops)"}}) {
    INFO(flags);
    const auto run = run_weft("plan " + scenario + " " + flags);
    CHECK(run.exit_code == 2);
    CHECK_THAT(run.err, Contains(message));
  }
}

}  // namespace
}  // namespace weft
