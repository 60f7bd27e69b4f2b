// Numeric flags of every command: what is not a number of the flag's kind, or lies outside its
// bounds, is refused at parse time with the flag named and exit 2, as bad input in files is.
#include <catch2/catch.hpp>

#include <filesystem>
#include <string>
#include <utility>

#include "tests/support/cli_expectations.hpp"
#include "tests/support/run_command.hpp"

namespace weft {
namespace {

using Catch::Matchers::Contains;
using Catch::Matchers::StartsWith;
using test::run_weft;

// `arguments` exit 2 with one error naming `message`, print nothing on stdout, and write no file.
void expect_refused(const std::string& arguments, const std::string& message, const std::filesystem::path& output) {
  INFO(arguments);
  const auto run = run_weft(arguments);
  CHECK(run.exit_code == 2);
  CHECK_THAT(run.err, StartsWith("weft: error: " + message) && Contains("Run with --help for more information."));
  CHECK(run.out.empty());
  CHECK_FALSE(std::filesystem::exists(output));
}

TEST_CASE("numeric flags refuse NaN, infinities, garbage and values out of bounds, naming the flag", "[cli][errors]") {
  const test::TempDir dir;
  const std::string scenario = "'" + test::experiment("cpu-gpt-pp2") + "'";
  const std::string vlm = "'" + test::experiment("cpu-vlm-pp2-dip") + "'";
  const std::string dflop = "'" + test::experiment("dflop-llava-ov-llama3-8b-32xa100") + "'";
  const std::string entrain = "'" + test::experiment("entrain-vlm-s-64xa40") + "'";
  const std::string attention = "'" + test::experiment("cornstarch-llama3-70b-cp8-64xa40") + "'";
  const std::string goodput = "'" + test::experiment("gpt3-2.7b-30xa40-oobleck") + "' '" + WEFT_SOURCE_DIR +
                              "/scenarios/resilience/oobleck-every-6h.json'";
  const auto output = dir.file("out.json");
  const std::string json = " --json " + test::quoted(output);
  const std::pair<std::string, std::string> cases[] = {
      {"sweep " + scenario + " --top -1", "--top: expected an integer of at least 1, got '-1'"},
      {"sweep " + scenario + " --top 2.5", "--top: expected an integer of at least 1, got '2.5'"},
      {"sweep " + scenario + " --threads 0", "--threads: expected an integer from 1 to 1024, got '0'"},
      {"sweep " + scenario + " --threads 100000", "--threads: expected an integer from 1 to 1024, got '100000'"},
      {"sweep " + scenario + " --gpus 0", "--gpus: expected an integer from 1 to 2147483647, got '0'"},
      {"sweep " + scenario + " --max-minutes nan", "--max-minutes: expected a number above 0, got 'nan'"},
      {"sweep " + scenario + " --max-ops 0", "--max-ops: expected an integer of at least 1, got '0'"},
      {"simulate " + scenario + " --max-ops 1e3", "--max-ops: expected an integer of at least 1, got '1e3'"},
      {"plan " + vlm + " --threads abc", "--threads: expected an integer from 1 to 1024, got 'abc'"},
      {"plan " + vlm + " --iterations 0", "--iterations: expected an integer from 1 to 1000000000, got '0'"},
      {"plan " + vlm + " --window -1", "--window: expected an integer from 0 to 2147483647, got '-1'"},
      {"plan " + vlm + " --sub-microbatch 0", "--sub-microbatch: expected an integer from 1 to 2147483647, got '0'"},
      {"plan " + vlm + " --memory-limit-gib 0", "--memory-limit-gib: expected a number above 0, got '0'"},
      {"plan " + vlm + " --seed -1", "--seed: expected an integer of at least 0, got '-1'"},
      {"goodput " + goodput + " --days nan", "--days: expected a number from 1e-06 to 36500, got 'nan'"},
      {"goodput " + goodput + " --tokens inf", "--tokens: expected a number above 0, got 'inf'"},
      {"goodput " + goodput + " --seeds 0", "--seeds: expected an integer from 1 to 100000, got '0'"},
      {"dflop " + dflop + " --ilp-seconds nan", "--ilp-seconds: expected a number from 0.001 to 600, got 'nan'"},
      {"dflop " + dflop + " --correction-cost nan", "--correction-cost: expected a number from 0 to 1, got 'nan'"},
      {"dflop " + dflop + " --anomalies 0.1,inf", "--anomalies: expected a number from 0 to 100, got 'inf'"},
      {"entrain " + entrain + " --confidence nan", "--confidence: expected a number from 0.5 to 0.9999, got 'nan'"},
      {"attention " + attention + " --tile 8", "--tile: expected an integer from 16 to 4096, got '8'"},
      {"bench --backend cpu --threads 5000 -o " + test::quoted(output),
       "--threads: expected an integer from 1 to 1024, got '5000'"},
  };
  for (const auto& [arguments, message] : cases) {
    const bool writes_own_output = arguments.starts_with("bench");
    expect_refused(arguments + (writes_own_output ? "" : json), message, output);
  }
}

TEST_CASE("usage errors read as any other bad input", "[cli][errors]") {
  const test::TempDir dir;
  const auto output = dir.file("out.csv");
  expect_refused("sweep --csv " + test::quoted(output), "SCENARIO is required", output);
  expect_refused("sweep '" + test::experiment("cpu-gpt-pp2") + "' --fast --csv " + test::quoted(output),
                 "The following argument was not expected: --fast", output);
  const auto help = run_weft("sweep --help");
  CHECK(help.exit_code == 0);
  CHECK_THAT(help.out, Contains("--threads T:in [1 - 1024]") && Contains("--top K:>= 1"));
}

TEST_CASE("a flag's bounds are inclusive: the most threads are taken", "[cli]") {
  const auto run = run_weft("sweep '" + test::experiment("cpu-gpt-pp2") + "' --threads 1024 --top 1");
  CHECK(run.exit_code == 0);
  CHECK_THAT(run.out, Contains("Top 1 by throughput"));
}

}  // namespace
}  // namespace weft
