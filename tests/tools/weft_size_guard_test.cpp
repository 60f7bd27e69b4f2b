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

}  // namespace
}  // namespace weft
