#pragma once

#include <string>

namespace weft::test {

// The path of bundled experiment `name` (scenarios/experiments/<name>.json).
inline std::string experiment(const std::string& name) {
  return std::string(WEFT_SOURCE_DIR) + "/scenarios/experiments/" + name + ".json";
}

// Runs `weft simulate` on a scenario file holding `scenario_text` (plus `extra_flags`), asking
// for a JSON result and a trace, and checks that bad input is handled as the CLI promises: exit 2,
// one line on stderr starting "weft: error: " and containing `expected_message`, nothing on
// stdout, and no output file left behind.
void expect_simulate_rejects(const std::string& scenario_text, const std::string& expected_message,
                             const std::string& extra_flags = "");

}  // namespace weft::test
