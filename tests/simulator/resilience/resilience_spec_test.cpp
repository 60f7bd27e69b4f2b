#include "simulator/resilience/resilience_spec.hpp"

#include <catch2/catch.hpp>

#include <cmath>
#include <string>

#include "tests/support/run_command.hpp"

namespace weft {
namespace {

using Catch::Matchers::Contains;

ResilienceSpec parse(const std::string& text) {
  const JsonDocument document = JsonDocument::parse_text(text, "test");
  return load_resilience_spec(document.root(), 8, 1e12);
}

// A valid file with `failures` and `recovery` as given.
std::string file_with(const std::string& failures, const std::string& recovery, const std::string& run = "{}") {
  return R"({"failures": )" + failures + R"(, "recovery": )" + recovery + R"(, "run": )" + run + "}";
}

const std::string kCauses =
    R"({"causes": [{"name": "GPU", "observed": {"count": 148, "days": 54, "gpus": 16384}, "blast_radius": "node",)"
    R"( "repair_hours": 48}, {"name": "software", "mtbf_hours": 1000, "per": "node", "blast_radius": "none"}]})";
const std::string kRecovery =
    R"({"policy": "checkpoint-restart", "checkpoint": {"interval_minutes": 30, "write_GBps": 2000,)"
    R"( "read_GBps": 1000}, "restart_minutes": 10})";

TEST_CASE("a resilience file's planned stops: their rate per node and their downtime", "[resilience]") {
  const ResilienceSpec spec = parse(file_with(
      R"({"planned": [{"name": "firmware", "observed": {"count": 47, "days": 54, "gpus": 16384}, "hours": 0.5},)"
      R"( {"name": "dataset", "mtbf_hours": 10000, "per": "gpu", "hours": 0}]})",
      kRecovery));
  REQUIRE(spec.failures.planned.size() == 2);
  CHECK(spec.failures.causes.empty());
  // 47 stops over 2,048 nodes of 8 GPUs and 54 days; 8 GPUs a node, each every 10,000 h.
  CHECK(spec.failures.planned[0].rate_per_node_s == Approx(47.0 / (2048.0 * 54 * 86400)).epsilon(1e-12));
  CHECK(spec.failures.planned[0].downtime_s == 1800.0);
  CHECK(spec.failures.planned[1].rate_per_node_s == Approx(8.0 / (10000 * 3600.0)).epsilon(1e-12));
  CHECK(spec.failures.planned[1].downtime_s == 0.0);
  CHECK(spec.failures.planned_rate_per_s(2048) ==
        Approx(47.0 / (54 * 86400) + 2048 * 8.0 / (10000 * 3600.0)).epsilon(1e-12));
}

TEST_CASE("a resilience file's rates, checkpoint and runs", "[resilience]") {
  const ResilienceSpec spec = parse(file_with(kCauses, kRecovery, R"({"days": 7, "seeds": 20, "tokens": 1e12})"));
  REQUIRE(spec.failures.causes.size() == 2);
  // 148 failures over 2,048 nodes and 54 days.
  CHECK(spec.failures.causes[0].rate_per_node_s == Approx(148.0 / (2048.0 * 54 * 86400)).epsilon(1e-12));
  CHECK(spec.failures.causes[0].repair_s == 48 * 3600.0);
  CHECK(spec.failures.causes[1].rate_per_node_s == Approx(1.0 / (1000 * 3600.0)).epsilon(1e-12));
  CHECK(spec.failures.rate_per_s(10) == Approx(10 * (148.0 / (2048.0 * 54 * 86400) + 1.0 / 3.6e6)).epsilon(1e-12));
  const RecoveryPolicy& recovery = spec.recovery;
  CHECK(recovery.checkpoint.interval_s == 1800.0);
  CHECK(recovery.checkpoint.bytes == 1e12);                              // the scenario's, none given
  CHECK(recovery.checkpoint_stall_s(64) == Approx(0.5).epsilon(1e-12));  // 1 TB at 2 TB/s
  CHECK(recovery.reload_s() == Approx(1.0).epsilon(1e-12));
  CHECK(recovery.restart_s == 600.0);
  CHECK_FALSE(recovery.checkpoint.on_notice);  // checkpoint-restart's default
  CHECK(spec.days == 7.0);
  CHECK(spec.seeds == 20);
  CHECK(spec.tokens == 1e12);
  SECTION("checkpoints on a failure's notice: varuna's default, checkpoint-restart's on request") {
    const std::string checkpoint = R"("checkpoint": {"interval_minutes": 1, "write_GBps": 1, "read_GBps": 1)";
    const auto policy = [&](const std::string& text) { return parse(file_with(kCauses, text)).recovery; };
    CHECK(policy(R"({"policy": "varuna", )" + checkpoint + R"(}, "restart_minutes": 1})").checkpoint.on_notice);
    CHECK_FALSE(policy(R"({"policy": "varuna", )" + checkpoint + R"(, "on_notice": false}, "restart_minutes": 1})")
                    .checkpoint.on_notice);
    CHECK(policy(R"({"policy": "checkpoint-restart", )" + checkpoint + R"(, "on_notice": true}, "restart_minutes": 1})")
              .checkpoint.on_notice);
  }
  SECTION("morphing onto nodes back from repair: varuna's default, off on request") {
    const std::string checkpoint = R"("checkpoint": {"interval_minutes": 1, "write_GBps": 1, "read_GBps": 1})";
    const auto policy = [&](const std::string& text) { return parse(file_with(kCauses, text)).recovery; };
    CHECK(policy(R"({"policy": "varuna", )" + checkpoint + R"(, "restart_minutes": 1})").morph_on_return);
    CHECK_FALSE(policy(R"({"policy": "varuna", )" + checkpoint + R"(, "restart_minutes": 1, "morph_on_return": false})")
                    .morph_on_return);
    CHECK_FALSE(
        policy(R"({"policy": "checkpoint-restart", )" + checkpoint + R"(, "restart_minutes": 1})").morph_on_return);
  }
  SECTION("slowdowns: a rate per node, a duration and a speed") {
    const auto slowed = parse(file_with(
        R"({"slowdowns": [{"name": "throttled", "mtbf_hours": 800, "per": "gpu", "hours": 2, "speed": 0.75},)"
        R"( {"name": "host", "observed": {"count": 10, "days": 5, "nodes": 100}, "hours": 0.5, "speed": 0.5}]})",
        kRecovery));
    CHECK(slowed.failures.causes.empty());
    REQUIRE(slowed.failures.slowdowns.size() == 2);
    CHECK(slowed.failures.slowdowns[0].rate_per_node_s == Approx(8.0 / (800 * 3600.0)).epsilon(1e-12));
    CHECK(slowed.failures.slowdowns[0].duration_s == 7200.0);
    CHECK(slowed.failures.slowdowns[0].speed == 0.75);
    CHECK(slowed.failures.slowdowns[1].rate_per_node_s == Approx(10.0 / (100 * 5 * 86400.0)).epsilon(1e-12));
    CHECK(slowed.failures.slowdown_rate_per_s(3) ==
          Approx(3 * (8.0 / (800 * 3600.0) + 10.0 / (100 * 5 * 86400.0))).epsilon(1e-12));
  }
  SECTION("an MTBF per GPU is eight times the failures per node") {
    const auto per_gpu = parse(file_with(
        R"({"causes": [{"name": "x", "mtbf_hours": 800, "per": "gpu", "blast_radius": "none"}]})", kRecovery));
    CHECK(per_gpu.failures.causes[0].rate_per_node_s == Approx(8.0 / (800 * 3600.0)).epsilon(1e-12));
  }
  SECTION("asynchronous checkpoints stall for each GPU's shard to reach host memory") {
    const auto async = parse(file_with(
        kCauses, R"({"policy": "checkpoint-restart", "checkpoint": {"interval_minutes": "auto", "mode": "async",)"
                 R"( "bytes": 6.4e11, "write_GBps": 100, "read_GBps": 100, "snapshot_GBps_per_gpu": 10},)"
                 R"( "restart_minutes": 0, "hot_spare_nodes": 4})"));
    CHECK_FALSE(async.recovery.checkpoint.interval_s.has_value());
    // 640 GB over 64 GPUs is 10 GB each: 1 s at 10 GB/s, then 6.4 s to write at 100 GB/s.
    CHECK(async.recovery.checkpoint_stall_s(64) == Approx(1.0).epsilon(1e-12));
    CHECK(async.recovery.checkpoint_durable_s(64) == Approx(7.4).epsilon(1e-12));
    CHECK(async.recovery.hot_spare_nodes == 4);
  }
}

TEST_CASE("bad resilience files name the field and what was expected", "[resilience]") {
  const auto rejects = [](const std::string& text, const std::string& message) {
    CHECK_THROWS_WITH(parse(text), Contains(message));
  };
  rejects("[]", "expected a resilience file");
  rejects(file_with(R"({"causes": []})", kRecovery), "failures.causes: expected at least one cause");
  const std::string cause =
      R"("causes": [{"name": "x", "mtbf_hours": 10, "per": "node", "blast_radius": "node", "repair_hours": 1}])";
  rejects(file_with("{" + cause + R"(, "notice_seconds": -1})", kRecovery),
          "failures.notice_seconds: expected a number >= 0");
  rejects(file_with("{" + cause + R"(, "notice_seconds": 7200})", kRecovery),
          "failures.notice_seconds: expected at most 3600 seconds of notice");
  CHECK(parse(file_with("{" + cause + R"(, "notice_seconds": 30})", kRecovery)).failures.notice_s == 30.0);
  rejects(file_with(R"({"causes": [{"name": "x", "blast_radius": "node", "repair_hours": 1}]})", kRecovery),
          "failures.causes[0]: expected one of mtbf_hours");
  rejects(
      file_with(R"({"causes": [{"name": "x", "mtbf_hours": -1, "per": "gpu", "blast_radius": "none"}]})", kRecovery),
      "failures.causes[0].mtbf_hours");
  rejects(
      file_with(R"({"causes": [{"name": "x", "mtbf_hours": 1, "per": "rack", "blast_radius": "none"}]})", kRecovery),
      "failures.causes[0].per: 'rack' is not one of gpu or node");
  rejects(file_with(R"({"causes": [{"name": "x", "observed": {"count": 1, "days": 1}, "blast_radius": "none"}]})",
                    kRecovery),
          "failures.causes[0].observed: expected one of gpus or nodes");
  rejects(
      file_with(R"({"causes": [{"name": "x", "mtbf_hours": 1, "per": "node", "blast_radius": "node"}]})", kRecovery),
      "failures.causes[0]: expected repair_hours");
  rejects(file_with(R"({"causes": [{"name": "x", "mtbf_hours": 1, "per": "node", "blast_radius": "rack",)"
                    R"( "repair_hours": 1}]})",
                    kRecovery),
          "failures: expected rack_nodes");
  rejects(file_with(R"({"causes": [{"name": "x", "mtbf_hours": 1, "per": "node", "blast_radius": "pod"}]})", kRecovery),
          "failures.causes[0].blast_radius: 'pod' is not one of none, node or rack");
  const std::string slowdown = R"({"name": "x", "mtbf_hours": 10, "per": "node", )";
  rejects(file_with(R"({"slowdowns": [)" + slowdown + R"("hours": 1, "speed": 1}]})", kRecovery),
          "failures.slowdowns[0].speed: expected a share of the healthy rate below 1");
  rejects(file_with(R"({"slowdowns": [)" + slowdown + R"("hours": 1, "speed": 0}]})", kRecovery),
          "failures.slowdowns[0].speed");
  rejects(file_with(R"({"slowdowns": [)" + slowdown + R"("speed": 0.5}]})", kRecovery),
          "failures.slowdowns[0]: missing required field 'hours'");
  rejects(file_with(R"({"slowdowns": [)" + slowdown + R"("hours": 1e9, "speed": 0.5}]})", kRecovery),
          "failures.slowdowns[0].hours: expected at most 876000 hours");
  rejects(file_with(R"({"slowdowns": [)" + slowdown + R"("hours": 1, "speed": 0.5, "repair_hours": 1}]})", kRecovery),
          "failures.slowdowns[0].repair_hours: unknown field");
  rejects(file_with(R"({"slowdowns": []})", kRecovery), "failures.slowdowns: expected at least one cause of slowdowns");
  const std::string planned = R"({"name": "firmware", "observed": {"count": 47, "days": 54, "gpus": 16384}, )";
  rejects(file_with(R"({"planned": []})", kRecovery), "failures.planned: expected at least one cause of planned stops");
  rejects(file_with(R"({"planned": [{"name": "x", "mtbf_hours": 1, "per": "node"}]})", kRecovery),
          "failures.planned[0]: missing required field 'hours'");
  rejects(file_with(R"({"planned": [)" + planned + R"("hours": -1}]})", kRecovery), "failures.planned[0].hours");
  rejects(file_with(R"({"planned": [)" + planned + R"("hours": 1e9}]})", kRecovery),
          "failures.planned[0].hours: expected at most 876000 hours");
  rejects(file_with(R"({"planned": [)" + planned + R"("hours": 1, "blast_radius": "node"}]})", kRecovery),
          "failures.planned[0].blast_radius: unknown field");
  rejects(file_with(R"({"planned": [{"name": "x", "hours": 1}]})", kRecovery),
          "failures.planned[0]: expected one of mtbf_hours");
  rejects(file_with(R"({"planned": [{"name": "x", "mtbf_hours": 1e-320, "per": "node", "hours": 1}]})", kRecovery),
          "failures.planned: the causes' rates add up to no finite rate");
  rejects(file_with(kCauses, R"({"policy": "bamboo-v2"})"),
          "recovery.policy: 'bamboo-v2' is not one of checkpoint-restart, oobleck, varuna or bamboo");
  rejects(file_with(kCauses, R"({"policy": "bamboo", "checkpoint": {"interval_minutes": "none", "write_GBps": 1,)"
                             R"( "read_GBps": 1}, "restart_minutes": 1})"),
          "recovery: expected reconfigure_seconds: bamboo's pipeline rebuild");
  rejects(file_with(kCauses, R"({"policy": "varuna", "checkpoint": {"interval_minutes": 1,)"
                             R"( "write_GBps": 1, "read_GBps": 1}, "restart_minutes": 1, "reconfigure_seconds": 5})"),
          "recovery.reconfigure_seconds: applies to the oobleck and bamboo policies only");
  rejects(file_with(kCauses, R"({"policy": "oobleck", "checkpoint": {"interval_minutes": "none", "write_GBps": 1,)"
                             R"( "read_GBps": 1}, "restart_minutes": 1, "reconfigure_seconds": 5})"),
          "recovery: expected fault_tolerance");
  rejects(file_with(kCauses, R"({"policy": "oobleck", "checkpoint": {"interval_minutes": "none", "write_GBps": 1,)"
                             R"( "read_GBps": 1}, "restart_minutes": 1, "fault_tolerance": 1,)"
                             R"( "reconfigure_seconds": 5, "hot_spare_nodes": 2})"),
          "recovery.hot_spare_nodes: oobleck trains on every healthy node: it keeps no spare idle");
  rejects(file_with(kCauses, R"({"policy": "checkpoint-restart", "checkpoint": {"interval_minutes": 1,)"
                             R"( "write_GBps": 1, "read_GBps": 1}, "restart_minutes": 1, "fault_tolerance": 1})"),
          "recovery.fault_tolerance: applies to the oobleck policy only");
  rejects(file_with(kCauses, R"({"policy": "oobleck", "checkpoint": {"interval_minutes": "none", "write_GBps": 1,)"
                             R"( "read_GBps": 1}, "restart_minutes": 1, "fault_tolerance": 1,)"
                             R"( "reconfigure_seconds": 5, "templates": "some"})"),
          "recovery.templates: 'some' is not one of all or minimal");
  rejects(file_with(kCauses, R"({"policy": "varuna", "checkpoint": {"interval_minutes": 1,)"
                             R"( "write_GBps": 1, "read_GBps": 1}, "restart_minutes": 1, "templates": "minimal"})"),
          "recovery.templates: applies to the oobleck policy only");
  rejects(file_with(kCauses, R"({"policy": "bamboo", "checkpoint": {"interval_minutes": "none", "write_GBps": 1,)"
                             R"( "read_GBps": 1, "on_notice": true}, "restart_minutes": 1, "reconfigure_seconds": 5})"),
          "recovery.checkpoint.on_notice: applies to the checkpoint-restart and varuna policies only: bamboo loses at "
          "most the iteration under way");
  rejects(file_with(kCauses, R"({"policy": "varuna", "checkpoint": {"interval_minutes": 1, "write_GBps": 1,)"
                             R"( "read_GBps": 1, "on_notice": 1}, "restart_minutes": 1})"),
          "recovery.checkpoint.on_notice");
  rejects(file_with(kCauses, R"({"policy": "checkpoint-restart", "checkpoint": {"interval_minutes": 1,)"
                             R"( "write_GBps": 1, "read_GBps": 1}, "restart_minutes": 1, "morph_on_return": true})"),
          "recovery.morph_on_return: applies to the varuna policy only");
  rejects(file_with(kCauses, R"({"policy": "varuna", "checkpoint": {"interval_minutes": 1,)"
                             R"( "write_GBps": 1, "read_GBps": 1}, "restart_minutes": 1, "morph_on_return": "yes"})"),
          "recovery.morph_on_return");
  rejects(file_with(kCauses, R"({"policy": "checkpoint-restart", "checkpoint": {"interval_minutes": "often",)"
                             R"( "write_GBps": 1, "read_GBps": 1}, "restart_minutes": 1})"),
          "recovery.checkpoint.interval_minutes: 'often' is not a number of minutes");
  rejects(file_with(kCauses, R"({"policy": "checkpoint-restart", "checkpoint": {"interval_minutes": 1,)"
                             R"( "mode": "async", "write_GBps": 1, "read_GBps": 1}, "restart_minutes": 1})"),
          "recovery.checkpoint: expected snapshot_GBps_per_gpu");
  rejects(file_with(kCauses, R"({"policy": "checkpoint-restart", "checkpoint": {"interval_minutes": 1,)"
                             R"( "write_GBps": 0, "read_GBps": 1}, "restart_minutes": 1})"),
          "recovery.checkpoint.write_GBps");
  rejects(file_with(kCauses, kRecovery, R"({"seeds": 0})"), "run.seeds");
  rejects(file_with(kCauses, kRecovery, R"({"days": 1e9})"), "run.days: expected at most 36500 days");
  rejects(file_with(kCauses, kRecovery, R"({"hours": 1})"), "run.hours: unknown field");
}

TEST_CASE("a failure trace is read next to its resilience file", "[resilience]") {
  const test::TempDir dir;
  dir.write("spot.csv", "# preemptions\nhours,nodes,down_hours\n2,1,\n0.5,2,1.5\n");
  const JsonDocument document = JsonDocument::parse_text(file_with(R"({"trace": "spot.csv"})", kRecovery), "test");
  const ResilienceSpec spec = load_resilience_spec(document.root(), 8, 1e12, dir.path());
  CHECK(spec.failures.causes.empty());
  REQUIRE(spec.failures.trace.size() == 2);
  // Sorted by time: 2 nodes at 30 min for 1.5 h, then 1 node at 2 h for good.
  CHECK(spec.failures.trace[0].at_s == 1800.0);
  CHECK(spec.failures.trace[0].nodes == 2);
  CHECK(spec.failures.trace[0].down_s == 5400.0);
  CHECK(spec.failures.trace[1].at_s == 7200.0);
  CHECK(std::isinf(spec.failures.trace[1].down_s));
  const auto rejects = [&](const std::string& text, const std::string& message) {
    dir.write("bad.csv", text);
    CHECK_THROWS_WITH(read_failure_trace(dir.file("bad.csv")), Contains(message));
  };
  rejects("time,nodes\n", "bad.csv:1: expected the header hours,nodes,down_hours");
  rejects("hours,nodes,down_hours\n1,2\n", "bad.csv:2: expected 3 fields");
  rejects("hours,nodes,down_hours\n-1,2,3\n", "bad.csv:2: hours: '-1' is not a number of hours");
  rejects("hours,nodes,down_hours\n1,0,3\n", "bad.csv:2: nodes: expected a whole number from 1");
  rejects("", "bad.csv: expected the header");
  CHECK_THROWS_WITH(read_failure_trace(dir.file("missing.csv")),
                    Contains("missing.csv: cannot read the failure trace"));
  CHECK_THROWS_WITH(parse(file_with("{}", kRecovery)),
                    Contains("failures: expected causes, a trace, slowdowns or planned stops"));
}

}  // namespace
}  // namespace weft
