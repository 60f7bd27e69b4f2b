// `weft suite` on the bundled published runs, through the real binary.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <filesystem>
#include <set>
#include <string>

#include "tests/support/run_command.hpp"

namespace weft {
namespace {

using Catch::Matchers::Contains;
using test::read_file;
using test::run_weft;
using test::TempDir;

// The number docs/VALIDATION.md's copy of the suite's output prints after `label`.
double documented_number(const std::string& label) {
  const std::string doc = read_file(std::filesystem::path(WEFT_SOURCE_DIR) / "docs" / "VALIDATION.md");
  const std::size_t at = doc.find(label);
  REQUIRE(at != std::string::npos);
  return std::stod(doc.substr(at + label.size()));
}

// The mean |error| docs/VALIDATION.md reports for the bundled suite, in percent.
double documented_mean_error() { return documented_number("Mean |error| "); }

TEST_CASE("weft suite simulates the published runs and stays within the documented error", "[cli][suite]") {
  const TempDir dir;
  const auto run = run_weft("suite --json '" + dir.file("suite.json").string() + "'");
  INFO(run.err);
  REQUIRE(run.exit_code == 0);
  CHECK_THAT(run.out, Contains("published training runs") && Contains("mcore-h100-weak-462b") &&
                          Contains("Mean |error|") && Contains("mean signed error"));
  const auto json = nlohmann::json::parse(read_file(dir.file("suite.json")));
  const auto& cases = json["cases"];
  // The suite the issue asks for: at least 25 runs from 5 sources, A100 and H100, 8 to 6,000+ GPUs.
  CHECK(cases.size() >= 25);
  CHECK(json["summary"]["source_groups"].size() >= 5);
  std::set<std::string> gpus;
  std::int64_t fewest = 1 << 30, most = 0;
  double mean = 0.0;
  int predicted_oom = 0;
  for (const auto& c : cases) {
    gpus.insert(c["gpu"].get<std::string>().substr(0, 4));
    fewest = std::min(fewest, c["gpus"].get<std::int64_t>());
    most = std::max(most, c["gpus"].get<std::int64_t>());
    mean += std::abs(c["error"].get<double>());
    predicted_oom += c["oom"].get<bool>() ? 1 : 0;
  }
  // Runs that ran and that weft predicts out of memory are listed with weft's peak; their number
  // does not grow past the documented one.
  CHECK(json["summary"]["predicted_out_of_memory"] == predicted_oom);
  CHECK(predicted_oom <= documented_number("Predicted out of memory: "));
  mean /= static_cast<double>(cases.size());
  CHECK(gpus == std::set<std::string>{"A100", "H100"});
  CHECK(fewest <= 8);
  CHECK(most >= 6000);
  CHECK(json["summary"]["mean_abs_error"].get<double>() == Approx(mean));
  CHECK(100.0 * mean <= documented_mean_error() + 0.05);
  // Runs compared on their peak memory alone are listed in the memory table, not among the cases.
  CHECK_THAT(run.out, Contains("compared on their peak memory only"));
  REQUIRE_FALSE(json["memory_only_runs"].empty());
  for (const auto& r : json["memory_only_runs"]) {
    const std::string name = r["case"];
    CHECK_THAT(run.out.substr(run.out.find("Peak memory per GPU")), Contains(name));
    CHECK(r["published_memory_GB"].get<double>() > 0.0);
    for (const auto& c : cases) CHECK(c["case"] != name);
  }
  CHECK(json["summary"]["memory_only_cases"] == json["memory_only_runs"].size());
  // The runs their sources report out of memory: weft predicts none of them to fit.
  CHECK_THAT(run.out, Contains("Runs their sources report out of memory:"));
  REQUIRE_FALSE(json["out_of_memory_runs"].empty());
  for (const auto& r : json["out_of_memory_runs"]) {
    INFO(r["case"].get<std::string>());
    CHECK(r["oom"] == true);
  }

  // The published nccl-tests runs: the NVLink and NIC efficiencies of dgx-h100 come from the ring
  // all-reduces of one node and of 10 nodes of one GPU; its all-gathers and reduce-scatters, in a
  // node and one GPU per node, were not fitted and land within 5% at their largest size.
  CHECK_THAT(run.out, Contains("Collectives: published nccl-tests runs"));
  const auto& runs = json["collectives"];
  CHECK(runs.size() >= 20);
  int checked = 0;
  for (const auto& r : runs) {
    const std::string collective = r["collective"];
    const bool one_per_node = r["gpus_per_node"] == 1, one_node = r["nodes"] == 1;
    // dgx-h100's NVLS efficiency comes from together-nccl-tests' NVLS all-reduce; the others in a
    // node, with NVLS on or likely on, were not fitted.
    const bool nvls_all_reduce = collective == "all_reduce" && one_node && r["nvls"] != "off";
    if (!nvls_all_reduce &&
        ((collective != "all_gather" && collective != "reduce_scatter") || (!one_per_node && !one_node))) {
      continue;
    }
    INFO(r.dump());
    CHECK(std::abs(r["largest_error"].get<double>()) <= 0.05);
    ++checked;
  }
  CHECK(checked >= 9);
}

TEST_CASE("weft suite rejects bad case files with exit 2 and writes nothing", "[cli][suite][errors]") {
  const TempDir dir;
  const auto bad = dir.write("bad.json", R"({"description": "d", "source_group": "g", "source": "s", "quote": "q",
      "gpu": "H100", "assumptions": [], "published": {"metric": "speed", "value": 1}, "scenario": {}})");
  const auto run = run_weft("suite '" + bad.string() + "' --json '" + dir.file("out.json").string() + "'");
  CHECK(run.exit_code == 2);
  CHECK_THAT(run.err, Contains("bad.json: published.metric: 'speed' is not one of"));
  CHECK_FALSE(std::filesystem::exists(dir.file("out.json")));
  std::filesystem::create_directory(dir.file("empty"));
  const auto empty = run_weft("suite '" + dir.file("empty").string() + "'");
  CHECK(empty.exit_code == 2);
  CHECK_THAT(empty.err, Contains("no case files (*.json) or nccl-tests files (*.csv) in this folder"));
  const auto csv = dir.write("runs.csv", "cluster,gpu,nodes\ndgx-h100,H100,1\n");
  const auto bad_csv = run_weft("suite '" + csv.string() + "' --json '" + dir.file("out.json").string() + "'");
  CHECK(bad_csv.exit_code == 2);
  CHECK_THAT(bad_csv.err, Contains("runs.csv:1: the header has no column 'gpus_per_node'"));
  CHECK_FALSE(std::filesystem::exists(dir.file("out.json")));
}

}  // namespace
}  // namespace weft
