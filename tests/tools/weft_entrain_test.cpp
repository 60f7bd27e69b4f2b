// `weft entrain` on the bundled Entrain scenario, through the real binary.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <cmath>
#include <filesystem>
#include <string>

#include "tests/support/cli_expectations.hpp"
#include "tests/support/run_command.hpp"

namespace weft {
namespace {

using Catch::Matchers::Contains;
using Catch::Matchers::StartsWith;
using test::quoted;
using test::read_file;
using test::run_weft;
using test::TempDir;

const std::string kEntrain = test::experiment("entrain-vlm-s-64xa40");

TEST_CASE("weft entrain profiles, lays out and runs a batch as Entrain does", "[cli][entrain]") {
  const TempDir dir;
  const auto run = run_weft("entrain '" + kEntrain + "' --json " + quoted(dir.file("e.json")));
  INFO(run.err);
  REQUIRE(run.exit_code == 0);
  CHECK_THAT(run.out, Contains("64 GPUs, TP 2, 4 replicas, global batch 512 samples, micro-batch 4") &&
                          Contains("Minimum stable profiling batch (Algorithm 2: 59 validation batches per size)") &&
                          Contains("the analysis of Table 4.2") && Contains("Algorithm 3") &&
                          Contains("DIP (weft plan, 20 search expansions)") && Contains("+ eager forward (Entrain)"));
  const auto json = nlohmann::json::parse(read_file(dir.file("e.json")));
  // b_min is the first stable round's batch, n0 = 1 doubled.
  const auto& rounds = json["profiling"]["rounds"];
  REQUIRE_FALSE(rounds.empty());
  CHECK(rounds.back()["stable"] == true);
  CHECK(json["profiling"]["b_min"] == rounds.back()["batch"]);
  CHECK(rounds.back()["batch"].get<std::int64_t>() == std::int64_t{1} << (rounds.size() - 1));
  // Every layout splits a replica's 8 stage groups of 2 GPUs (64 GPUs / dp / tp) between the components.
  for (const auto& layout : json["layouts"]) {
    const int groups = 64 / 2 / layout["dp"].get<int>();
    CHECK(layout["encoder_stage_layers"].size() + layout["llm_stage_layers"].size() ==
          static_cast<std::size_t>(groups));
    int layers = 0;
    for (const auto& l : layout["encoder_stage_layers"]) layers += l.get<int>();
    CHECK(layers == 63);  // ViT 5B
  }
  // With two components the largest-remainder rule is rounding to the nearest: the encoder's share
  // of a replica's 8 stage groups, rounded.
  const double encoder = json["proportions"][0].get<double>();
  const double llm = json["proportions"][1].get<double>();
  CHECK(json["entrain_layout"]["allocation"][0].get<int>() ==
        static_cast<int>(std::lround(8 * encoder / (encoder + llm))));
  CHECK(json["best_layout"]["fits"] == true);
  // Runs: samples per second is the batch over the iteration.
  for (const auto& r : json["runs"])
    CHECK(r["samples_per_s"].get<double>() == Approx(512.0 / r["iteration_s"].get<double>()));
  SECTION("a context too short for weft plan's batch to be Entrain's leaves out weft plan, not Entrain") {
    auto scenario = nlohmann::json::parse(read_file(kEntrain));
    scenario["training"]["seq_len"] = 4096;
    const auto short_context = run_weft("entrain " + quoted(dir.write("short.json", scenario.dump())));
    REQUIRE(short_context.exit_code == 0);
    CHECK_THAT(short_context.out,
               Contains("weft plan could not plan this batch: training.seq_len: 4096 tokens cannot pack "
                        "data.max_samples samples into every microbatch") &&
                   !Contains("DIP (weft plan") && Contains("+ eager forward (Entrain)"));
  }
  SECTION("the same scenario gives the same report") {
    const std::string first = read_file(dir.file("e.json"));
    const auto again = run_weft("entrain '" + kEntrain + "' --json " + quoted(dir.file("e.json")));
    REQUIRE(again.exit_code == 0);
    CHECK(again.out == run.out);
    CHECK(read_file(dir.file("e.json")) == first);
  }
}

TEST_CASE("weft entrain refuses bad input with exit 2 and leaves no file", "[cli][entrain]") {
  const TempDir dir;
  const auto rejects = [&](const std::string& arguments, const std::string& message) {
    const auto run = run_weft("entrain " + arguments + " --json " + quoted(dir.file("e.json")));
    CHECK(run.exit_code == 2);
    CHECK_THAT(run.err, Contains(message));
    CHECK(run.out.empty());
    CHECK_FALSE(std::filesystem::exists(dir.file("e.json")));
  };
  auto scenario = nlohmann::json::parse(read_file(kEntrain));
  auto unpacked = scenario;
  unpacked["data"]["pack"] = false;
  unpacked["data"].erase("max_samples");
  rejects(quoted(dir.write("unpacked.json", unpacked.dump())), "data.pack");
  auto no_data = scenario;
  no_data.erase("data");
  no_data["training"]["images"] = 2;
  rejects(quoted(dir.write("no-data.json", no_data.dump())), "needs a \"data\" section");
  rejects("'" + test::experiment("llama3-8b-4l-1xh100") + "'", "model: Entrain plans an encoder component");
  rejects("'" + kEntrain + "' --confidence 1.5", "--confidence");
  rejects("'" + kEntrain + "' --error 0", "--error");
  rejects("'" + kEntrain + "' --first-batch 0", "--first-batch");
  rejects("'" + kEntrain + "' --calibration nowhere.json", "nowhere.json");
  const auto missing = run_weft("entrain");
  CHECK(missing.exit_code == 2);
}

}  // namespace
}  // namespace weft
