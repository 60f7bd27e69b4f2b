// `weft calibrate` and `--calibration` through the real binary.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "tests/support/cpu_scenario.hpp"
#include "tests/support/run_command.hpp"

namespace weft {
namespace {

using Catch::Matchers::Contains;
using Catch::Matchers::StartsWith;
using test::read_file;
using test::run_weft;
using test::TempDir;

// A measurement file of device `device`: a GEMM grid of two points per axis (and one held-out
// shape), each twice as slow per FLOP at 64 as at 128.
std::string measurements(const std::string& device) {
  nlohmann::json list = nlohmann::json::array();
  for (int m : {64, 128}) {
    for (int n : {64, 128}) {
      for (int k : {64, 128}) {
        const double ns = 2.0 * m * n * k / (m == 64 ? 5.0 : 10.0);
        list.push_back(
            {{"op", "gemm"}, {"dtype", "bf16"}, {"shape", {{"m", m}, {"n", n}, {"k", k}}}, {"samples_ns", {ns}}});
      }
    }
  }
  list.push_back({{"op", "gemm"},
                  {"dtype", "bf16"},
                  {"shape", {{"m", 90}, {"n", 90}, {"k", 90}}},
                  {"split", "holdout"},
                  {"samples_ns", {2.0 * 90 * 90 * 90 / 7.07}}});
  for (int bytes : {4096, 65536}) {
    list.push_back({{"op", "elementwise"},
                    {"dtype", "bf16"},
                    {"shape", {{"inputs", bytes / 4}, {"outputs", bytes / 4}}},
                    {"samples_ns", {bytes / 10.0}}});
  }
  return nlohmann::json({{"format", "weft-measurements"},
                         {"version", 1},
                         {"backend", "cpu"},
                         {"device", device},
                         {"ranks", 2},
                         {"measurements", list}})
      .dump();
}

void expect_rejected(const std::string& arguments, const std::string& message, const TempDir& dir) {
  const auto run = run_weft(arguments + " -o '" + dir.file("profile.json").string() + "'");
  CHECK(run.exit_code == 2);
  CHECK_THAT(run.err, StartsWith("weft: error: ") && Contains(message));
  CHECK(std::count(run.err.begin(), run.err.end(), '\n') == 1);
  CHECK_FALSE(std::filesystem::exists(dir.file("profile.json")));
}

TEST_CASE("weft calibrate rejects bad measurement files naming the file and JSON path", "[cli][calibrate]") {
  const TempDir dir;
  const auto wrong = dir.write("wrong.json", R"({"format": "weft-plan", "version": 1})");
  expect_rejected("calibrate '" + wrong.string() + "'", "wrong.json: format: expected \"weft-measurements\"", dir);
  const auto empty = dir.write("empty.json", R"({"format": "weft-measurements", "version": 1, "backend": "cpu",
                                                "device": "d", "measurements": []})");
  expect_rejected("calibrate '" + empty.string() + "'", "empty.json: measurements: expected at least one measurement",
                  dir);
  const auto a = dir.write("a.json", measurements("cpu one"));
  const auto b = dir.write("b.json", measurements("cpu two"));
  expect_rejected("calibrate '" + a.string() + "' '" + b.string() + "'", "b.json: measured on 'cpu two'", dir);
  // The profile written over a measurement file would destroy it.
  const auto run = run_weft("calibrate '" + a.string() + "' -o '" + a.string() + "'");
  CHECK(run.exit_code == 2);
  CHECK_THAT(run.err, Contains("-o: '" + a.string() + "' is a file this command reads"));
  CHECK(read_file(a) == measurements("cpu one"));
}

TEST_CASE("weft calibrate reports held-out errors and its profile changes what simulate predicts", "[cli][calibrate]") {
  const TempDir dir;
  const auto file = dir.write("m.json", measurements("test-cpu"));
  const auto profile = dir.file("profile.json");
  const auto run = run_weft("calibrate '" + file.string() + "' -o '" + profile.string() + "'");
  INFO(run.err);
  REQUIRE(run.exit_code == 0);
  // The default model runs the held-out GEMM at the best rate, 10 FLOP/ns, where it ran at 7.07:
  // 29.3% too fast. The fit interpolates in the logarithm of m: 90 lies ln(90/64) / ln 2 = 0.49
  // of the way from 64 (rate 5) to 128 (rate 10), at 7.46: 5.2% too fast.
  CHECK_THAT(run.out, Contains("gemm bf16") && Contains("29.3%") && Contains("5.2%"));
  const auto json = nlohmann::json::parse(read_file(profile));
  CHECK(json["format"] == "weft-profile");
  CHECK(json["peak_flops"]["bf16"].get<double>() == Approx(10e9));

  const auto scenario = dir.write("s.json", test::tiny_gpt_scenario(R"({"tp": 2})"));
  const auto plain = run_weft("simulate '" + scenario.string() + "' --json '" + dir.file("a.json").string() + "'");
  const auto calibrated = run_weft("simulate '" + scenario.string() + "' --calibration '" + profile.string() +
                                   "' --json '" + dir.file("b.json").string() + "'");
  REQUIRE(plain.exit_code == 0);
  REQUIRE(calibrated.exit_code == 0);
  const double before = nlohmann::json::parse(read_file(dir.file("a.json")))["iteration_time_s"];
  const double after = nlohmann::json::parse(read_file(dir.file("b.json")))["iteration_time_s"];
  CHECK(before != after);
}

TEST_CASE("a profile applies only to the device it was measured on", "[cli][calibrate]") {
  const TempDir dir;
  const auto file = dir.write("m.json", measurements("another-cpu"));
  const auto profile = dir.file("profile.json");
  REQUIRE(run_weft("calibrate '" + file.string() + "' -o '" + profile.string() + "'").exit_code == 0);
  const auto scenario = dir.write("s.json", test::tiny_gpt_scenario(R"({"tp": 2})"));
  const auto run = run_weft("simulate '" + scenario.string() + "' --calibration '" + profile.string() + "'");
  CHECK(run.exit_code == 2);
  CHECK_THAT(run.err, Contains("--calibration: " + profile.string() +
                               ": measured on 'another-cpu' but the cluster's device is 'test-cpu'"));
  const auto sweep = run_weft("sweep '" + scenario.string() + "' --calibration '" + profile.string() + "'");
  CHECK(sweep.exit_code == 2);
}

TEST_CASE("a profile applies to a device spec that lists the name its GPU reports", "[cli][calibrate]") {
  const TempDir dir;
  const auto file = dir.write("m.json", measurements("Vendor CPU 9000"));
  const auto profile = dir.file("profile.json");
  REQUIRE(run_weft("calibrate '" + file.string() + "' -o '" + profile.string() + "'").exit_code == 0);
  std::string cluster = test::test_cpu_cluster();
  const std::string named = R"("name": "test-cpu",)";
  REQUIRE(cluster.find(named) != std::string::npos);
  cluster.replace(cluster.find(named), named.size(), named + R"( "reported_names": ["Vendor CPU 9000"],)");
  const auto scenario = dir.write("s.json", test::tiny_gpt_scenario(R"({"tp": 2})", cluster));
  const auto run = run_weft("simulate '" + scenario.string() + "' --calibration '" + profile.string() + "'");
  CHECK(run.exit_code == 0);
  CHECK(run.err.empty());
}

// The file of measurements("test-cpu") and an all-reduce of two ranks on one node.
std::string measurements_with_allreduce() {
  nlohmann::json file = nlohmann::json::parse(measurements("test-cpu"));
  for (double bytes : {1e3, 1e6}) {
    file["measurements"].push_back({{"op", "allreduce"},
                                    {"dtype", "bf16"},
                                    {"shape", {{"bytes", bytes}, {"group_size", 2}, {"ranks_per_node", 2}}},
                                    {"samples_ns", {2000 + bytes / 10}}});
  }
  return file.dump();
}

TEST_CASE("a profile measured inside a node does not price a group across nodes", "[cli][calibrate]") {
  const TempDir dir;
  const auto file = dir.write("m.json", measurements_with_allreduce());
  const auto profile = dir.file("profile.json").string();
  REQUIRE(run_weft("calibrate '" + file.string() + "' -o '" + profile + "'").exit_code == 0);
  const std::string one_node = test::test_cpu_cluster();
  std::string two_nodes = one_node;
  const std::string per_node = R"("gpus_per_node": 2)";
  REQUIRE(two_nodes.find(per_node) != std::string::npos);
  two_nodes.replace(two_nodes.find(per_node), per_node.size(), R"("gpus_per_node": 1)");
  const auto inside = dir.write("inside.json", test::tiny_gpt_scenario(R"({"dp": 2})", one_node));
  const auto across = dir.write("across.json", test::tiny_gpt_scenario(R"({"dp": 2})", two_nodes));
  const auto measured = run_weft("simulate '" + inside.string() + "' --calibration '" + profile + "'");
  CHECK(measured.exit_code == 0);
  CHECK(measured.err.empty());
  const auto warned = run_weft("simulate '" + across.string() + "' --calibration '" + profile + "'");
  CHECK(warned.exit_code == 0);
  CHECK_THAT(warned.err, Contains("weft: warning: the calibration profile measured no communication over 2 ranks, "
                                  "1 per node (dp group); the collective model costs its ops"));
  const auto strict = run_weft("simulate '" + across.string() + "' --calibration '" + profile + "' --strict --json '" +
                               dir.file("out.json").string() + "'");
  CHECK(strict.exit_code == 2);
  CHECK_THAT(strict.err, Contains("weft: error: --strict: the calibration profile measured no communication over 2 "
                                  "ranks, 1 per node"));
  CHECK_FALSE(std::filesystem::exists(dir.file("out.json")));

  // Sweeps and DIP plans say so too: the sweep once for all its plans.
  const std::string with_profile = "'" + across.string() + "' --calibration '" + profile + "'";
  const auto sweep = run_weft("sweep " + with_profile);
  CHECK(sweep.exit_code == 0);
  CHECK_THAT(sweep.err, Contains("weft: warning: the calibration profile measured no communication over 2 ranks, "
                                 "1 per node"));
  const auto strict_sweep = run_weft("sweep " + with_profile + " --strict --csv '" + dir.file("s.csv").string() + "'");
  CHECK(strict_sweep.exit_code == 2);
  CHECK_THAT(strict_sweep.err, Contains("weft: error: --strict: the calibration profile measured no communication"));
  CHECK_FALSE(std::filesystem::exists(dir.file("s.csv")));
  // A DIP plan runs no DP reduction (its stage model leaves it out): its TP pair across the nodes.
  const auto across_tp = dir.write("across-tp.json", test::tiny_gpt_scenario(R"({"tp": 2})", two_nodes));
  const std::string tp_with_profile = "'" + across_tp.string() + "' --calibration '" + profile + "'";
  const auto plan = run_weft("plan " + tp_with_profile);
  CHECK(plan.exit_code == 0);
  CHECK_THAT(plan.err, Contains("weft: warning: the calibration profile measured no communication over 2 ranks"));
  const auto strict_plan = run_weft("plan " + tp_with_profile + " --strict");
  CHECK(strict_plan.exit_code == 2);
  CHECK_THAT(strict_plan.err, Contains("weft: error: --strict: the calibration profile measured no communication"));
  const auto inside_sweep = run_weft("sweep '" + inside.string() + "' --calibration '" + profile + "' --strict");
  CHECK(inside_sweep.exit_code == 0);
  CHECK(inside_sweep.err.empty());
}

}  // namespace
}  // namespace weft
