#include "tests/support/cli_expectations.hpp"

#include <algorithm>
#include <filesystem>

#include <catch2/catch.hpp>

#include "tests/support/run_command.hpp"

namespace weft::test {

void expect_simulate_rejects(const std::string& scenario_text, const std::string& expected_message,
                             const std::string& extra_flags) {
  using Catch::Matchers::Contains;
  using Catch::Matchers::StartsWith;
  const TempDir dir;
  const auto scenario = dir.write("scenario.json", scenario_text);
  const auto json_file = dir.file("result.json");
  const auto trace_file = dir.file("trace.json");
  const auto run = run_weft("simulate '" + scenario.string() + "' " + extra_flags + " --json '" + json_file.string() +
                            "' --trace '" + trace_file.string() + "'");
  INFO(scenario_text);
  CHECK(run.exit_code == 2);
  CHECK_THAT(run.err, StartsWith("weft: error: ") && Contains(expected_message));
  CHECK(std::count(run.err.begin(), run.err.end(), '\n') == 1);
  CHECK(run.out.empty());
  CHECK_FALSE(std::filesystem::exists(json_file));
  CHECK_FALSE(std::filesystem::exists(trace_file));
  CHECK(std::distance(std::filesystem::directory_iterator(dir.path()), {}) == 1);  // only the scenario
}

}  // namespace weft::test
