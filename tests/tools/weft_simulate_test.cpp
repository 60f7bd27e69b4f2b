// `weft simulate` end to end, through the real binary.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <filesystem>

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

const std::string kBundled = std::string(WEFT_SOURCE_DIR) + "/scenarios/experiments/graph-pipeline-2x2.json";

TEST_CASE("weft simulate reports on the bundled scenario and writes JSON and a trace", "[cli]") {
  const TempDir dir;
  const auto json_file = dir.file("result.json");
  const auto trace_file = dir.file("trace.json");
  const auto run =
      run_weft("simulate '" + kBundled + "' --json '" + json_file.string() + "' --trace '" + trace_file.string() + "'");
  INFO(run.err);
  REQUIRE(run.exit_code == 0);
  CHECK_THAT(run.out,
             Contains("Makespan: ") && Contains("Critical path: ") && Contains("gpu3") && Contains("nic-a-to-b"));
  CHECK(run.err.empty());

  const auto result = nlohmann::json::parse(read_file(json_file));
  REQUIRE(result["devices"].size() == 6);
  CHECK(result["makespan_ns"].get<long long>() > 0);
  for (const auto& device : result["devices"]) {
    CHECK(device.contains("name"));
    CHECK(device["busy_ns"].get<long long>() <= result["makespan_ns"].get<long long>());
    CHECK(device.contains("peak_memory_bytes"));
    CHECK(device["oom"] == false);
  }
  // Forward GEMM of one stage, one microbatch: 2 x 4096 tokens x 201,326,592 parameters at
  // 0.807 x 989.4 TFLOP/s = 2.066 ms; the chain forward, forward, backward x4, optimizer on each
  // GPU alone takes more than 6 of them.
  CHECK(result["makespan_ns"].get<double>() > 6 * 2.066e6);
  const auto trace = nlohmann::json::parse(read_file(trace_file));
  CHECK(trace["traceEvents"].size() > 40);
}

TEST_CASE("weft simulate is deterministic", "[cli]") {
  const TempDir dir;
  const auto first = run_weft("simulate '" + kBundled + "' --json '" + dir.file("a.json").string() + "' --trace '" +
                              dir.file("a.trace").string() + "'");
  const auto second = run_weft("simulate '" + kBundled + "' --json '" + dir.file("b.json").string() + "' --trace '" +
                               dir.file("b.trace").string() + "'");
  REQUIRE(first.exit_code == 0);
  REQUIRE(second.exit_code == 0);
  CHECK(read_file(dir.file("a.json")) == read_file(dir.file("b.json")));
  CHECK(read_file(dir.file("a.trace")) == read_file(dir.file("b.trace")));
}

TEST_CASE("weft simulate holds kernels back until their host issues them, as worked out by hand", "[cli][host]") {
  const TempDir dir;
  // The scenario's description works it out: the 74th op is issued at 74 x 13 us and runs 5 us;
  // without the host, the kernels alone take 2 x (200 + 6 x 5) + 60 x 5 us.
  const std::string bundled = test::experiment("graph-host-issue");
  auto scenario = nlohmann::json::parse(read_file(bundled));
  for (const auto& [host_ns, makespan_ns] : {std::pair{13000LL, 74 * 13000LL + 5000}, std::pair{0LL, 760000LL}}) {
    scenario["cost"]["host_issue_ns"] = host_ns;
    const auto file = dir.write("host" + std::to_string(host_ns) + ".json", scenario.dump());
    const auto run = run_weft("simulate '" + file.string() + "' --json '" + dir.file("out.json").string() + "'");
    INFO(run.err);
    REQUIRE(run.exit_code == 0);
    CHECK(nlohmann::json::parse(read_file(dir.file("out.json")))["makespan_ns"].get<long long>() == makespan_ns);
    // Held back by its host, the last op starts the critical path; without the host the path
    // runs from the first kernel.
    if (host_ns > 0) {
      CHECK_THAT(run.out,
                 Contains("Critical path: 1 ops, 5.000 us, from 962.000 us, when the host issued its first op"));
    } else {
      CHECK_THAT(run.out, Contains("Critical path: 74 ops, 760.000 us\n"));
    }
  }
}

TEST_CASE("weft simulate leaves the device's gap between kernels queued back to back, as worked out by hand",
          "[cli][host][kernel_gap]") {
  const TempDir dir;
  auto scenario = nlohmann::json::parse(read_file(test::experiment("graph-host-issue")));
  scenario["cost"]["kernel_gap_ns"] = 2000;
  // Without the host: 74 kernels back to back, 760 us of them and 73 gaps of 2 us. With it, the
  // short kernels run 7 us apart while the host is ahead (after the second GEMM, the k-th op
  // starts at 501 + 7 (k - 15) us) and the host catches up at the 66th (858 us both); from then
  // on each kernel waits for its issue, and the last still starts at 962 us.
  for (const auto& [host_ns, makespan_ns] : {std::pair{0LL, 760000LL + 73 * 2000}, std::pair{13000LL, 967000LL}}) {
    scenario["cost"]["host_issue_ns"] = host_ns;
    const auto file = dir.write("gap" + std::to_string(host_ns) + ".json", scenario.dump());
    const auto run = run_weft("simulate '" + file.string() + "' --json '" + dir.file("out.json").string() + "'");
    INFO(run.err);
    REQUIRE(run.exit_code == 0);
    CHECK(nlohmann::json::parse(read_file(dir.file("out.json")))["makespan_ns"].get<long long>() == makespan_ns);
  }
}

const std::string kDevices =
    R"("devices": [{"name": "gpu0", "spec": "h100-sxm"}, {"name": "gpu1", "spec": "h100-sxm"}])";

TEST_CASE("bad scenarios are rejected with the JSON path and exit 2", "[cli][errors]") {
  SECTION("malformed JSON") { test::expect_simulate_rejects("{\"devices\": [}", "scenario.json:1:14: invalid JSON"); }
  SECTION("a host issuing a first_ready stream") {
    test::expect_simulate_rejects(
        R"({"devices": [{"name": "gpu0", "spec": "h100-sxm", "streams": [{"name": "s", "policy": "first_ready",
            "host_issued": true}]}], "ops": []})",
        "scenario.json: devices[0].streams[0].host_issued: a host issues in_order streams only");
  }
  SECTION("a negative host issue time") {
    test::expect_simulate_rejects("{" + kDevices + R"(, "cost": {"host_issue_ns": -1}, "ops": []})",
                                  "scenario.json: cost.host_issue_ns: expected an integer >= 0, got -1");
  }
  SECTION("a negative kernel gap") {
    test::expect_simulate_rejects("{" + kDevices + R"(, "cost": {"kernel_gap_ns": -5}, "ops": []})",
                                  "scenario.json: cost.kernel_gap_ns: expected an integer >= 0, got -5");
  }
  SECTION("unknown field") {
    test::expect_simulate_rejects("{" + kDevices + R"(, "ops": [], "opz": []})", "scenario.json: opz: unknown field");
  }
  SECTION("wrong type") {
    test::expect_simulate_rejects(
        "{" + kDevices + R"(, "ops": [{"name": "a", "class": "gemm", "device": "gpu0", "stream": "compute",
                   "flops": "lots"}]})",
        "scenario.json: ops[0].flops: expected a number, got a string");
  }
  SECTION("missing device") {
    test::expect_simulate_rejects(
        "{" + kDevices + R"(, "ops": [{"name": "a", "class": "gemm", "device": "gpu7", "stream": "compute"}]})",
        "scenario.json: ops[0].device: unknown device 'gpu7'");
  }
  SECTION("cycle") {
    test::expect_simulate_rejects("{" + kDevices + R"(, "ops": [
        {"name": "a", "class": "gemm", "device": "gpu0", "stream": "compute", "after": ["b"]},
        {"name": "b", "class": "gemm", "device": "gpu1", "stream": "compute", "after": ["a"]}]})",
                                  "scenario.json: ops: dependency cycle: 'a' -> 'b' -> 'a'");
  }
  SECTION("unknown device spec") {
    test::expect_simulate_rejects(R"({"devices": [{"name": "gpu0", "spec": "b300"}], "ops": []})",
                                  "devices[0].spec: unknown device spec 'b300'");
  }
  SECTION("an op the device cannot run") {
    // The A100 has no fp8 units.
    test::expect_simulate_rejects(
        R"({"devices": [{"name": "gpu0", "spec": "a100-sxm-80gb"}], "ops": [{"name": "a", "class": "gemm",
                   "device": "gpu0", "stream": "compute", "dtype": "fp8", "flops": 1}]})",
        "op 'a' on device 'gpu0': device spec 'a100-sxm-80gb' has no fp8 peak FLOP/s");
  }
}

TEST_CASE("usage errors exit 2, help and version exit 0", "[cli][errors]") {
  const TempDir dir;
  CHECK(run_weft("").exit_code == 2);
  CHECK(run_weft("simulate").exit_code == 2);
  CHECK(run_weft("frobnicate").exit_code == 2);
  const auto missing = run_weft("simulate /nonexistent/scenario.json");
  CHECK(missing.exit_code == 2);
  CHECK_THAT(missing.err, Contains("/nonexistent/scenario.json: cannot open file"));
  const auto bad_output = run_weft("simulate '" + kBundled + "' --json /nonexistent/dir/out.json");
  CHECK(bad_output.exit_code == 2);
  CHECK_THAT(bad_output.err, Contains("--json: cannot write '/nonexistent/dir/out.json'"));

  // An output that would overwrite the scenario, or another output, is refused before any work.
  const auto scenario = dir.write("s.json", read_file(kBundled));
  const auto over_input = run_weft("simulate " + quoted(scenario) + " --json " + quoted(scenario));
  CHECK(over_input.exit_code == 2);
  CHECK_THAT(over_input.err,
             Contains("--json: '" + scenario.string() + "' is a file this command reads: writing it would destroy it"));
  CHECK(read_file(scenario) == read_file(kBundled));
  std::filesystem::create_symlink(scenario, dir.file("link.json"));
  CHECK_THAT(run_weft("simulate " + quoted(scenario) + " --trace " + quoted(dir.file("link.json"))).err,
             Contains("--trace: '" + dir.file("link.json").string() + "' is a file this command reads"));
  const auto twice = run_weft("simulate " + quoted(scenario) + " --json " + quoted(dir.file("o.json")) + " --trace " +
                              quoted(dir.path() / "." / "o.json"));
  CHECK(twice.exit_code == 2);
  CHECK_THAT(twice.err, Contains("--json: '" + dir.file("o.json").string() +
                                 "' is also the file of --trace: one would overwrite the other"));
  CHECK_FALSE(std::filesystem::exists(dir.file("o.json")));

  const auto help = run_weft("simulate --help");
  CHECK(help.exit_code == 0);
  CHECK_THAT(help.out, Contains("--trace") && Contains("--json") && Contains("SCENARIO"));
  const auto version = run_weft("--version");
  CHECK(version.exit_code == 0);
  CHECK_THAT(version.out, StartsWith("weft "));
}

}  // namespace
}  // namespace weft
