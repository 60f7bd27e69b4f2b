// `weft goodput` on a bundled scenario and resilience file, through the real binary.
#include <fmt/format.h>
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <csignal>
#include <filesystem>
#include <string>

#include "tests/support/background_weft.hpp"
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

const std::string kScenario = test::experiment("llama3-405b-16384xh100");
const std::string kResilience = std::string(WEFT_SOURCE_DIR) + "/scenarios/resilience/llama3-405b-table5.json";

TEST_CASE("weft goodput studies Llama 3 405B's runs under Table 5's failures", "[cli][goodput]") {
  const TempDir dir;
  const std::string flags = " --seeds 20 --days 10 --json " + quoted(dir.file("g.json")) + " --csv " +
                            quoted(dir.file("g.csv")) + " --html " + quoted(dir.file("g.html"));
  const auto run = run_weft("goodput '" + kScenario + "' '" + kResilience + "'" + flags);
  INFO(run.err);
  REQUIRE(run.exit_code == 0);
  CHECK_THAT(run.out, Contains("Healthy run") && Contains("job MTBF 3.09 h") && Contains("Young") &&
                          Contains("goodput (M tokens/s)") && Contains("waiting for repairs") &&
                          Contains("Planned stops    Planned maintenance: every 27.57 h (0.87 a day)") &&
                          Contains("planned maintenance (h)"));
  const auto json = nlohmann::json::parse(read_file(dir.file("g.json")));
  CHECK(json["seeds"] == 20);
  // 419 interruptions in 54 days on 2,048 nodes: 7.76 a day.
  CHECK(86400.0 / json["job_mtbf_s"].get<double>() == Approx(419.0 / 54.0).epsilon(1e-9));
  const double healthy = json["tokens_per_iteration"].get<double>() / json["iteration_time_s"].get<double>();
  CHECK(json["goodput_tokens_per_s"]["mean"].get<double>() < healthy);
  double hours = 0.0;
  for (const auto& [name, spread] : json["hours"].items()) hours += spread["mean"].get<double>();
  CHECK(hours == Approx(10 * 24.0).epsilon(1e-9));
  // 47 planned stops in 54 days: 8.7 in 10 days, the mean of 20 runs within 4 standard errors
  // (0.66) of it, less the few that come while the job is stopped and wait to be made as one.
  CHECK(std::abs(json["planned_stops"]["mean"].get<double>() - 47.0 / 54.0 * 10) < 4 * 0.66);
  CHECK(json["hours"]["planned maintenance"]["mean"] == 0.0);  // the file's stops have no downtime
  // The searched interval is within a factor of two of Daly's.
  const double ratio = json["checkpoint_interval_s"].get<double>() / json["daly_interval_s"].get<double>();
  CHECK(ratio > 0.5);
  CHECK(ratio < 2.0);
  const std::string csv = read_file(dir.file("g.csv"));
  CHECK(std::count(csv.begin(), csv.end(), '\n') == 21);
  CHECK_THAT(csv, StartsWith("seed,wall_s,goodput_tokens_per_s,trained_s,lost_s,checkpoint_s,restart_s,waiting_s,"
                             "maintenance_s,reconfigure_s,degraded_s,interruptions,reconfigurations,checkpoints,"
                             "planned_stops,reached_target\n"));
  CHECK_THAT(read_file(dir.file("g.html")),
             Contains("<svg") && Contains("Tokens trained over time") && Contains("planned maintenance"));
  SECTION("the same seeds give byte-identical output") {
    const TempDir again;
    const auto rerun = run_weft("goodput '" + kScenario + "' '" + kResilience + "' --seeds 20 --days 10 --csv " +
                                quoted(again.file("g.csv")));
    REQUIRE(rerun.exit_code == 0);
    CHECK(read_file(again.file("g.csv")) == csv);
  }
}

TEST_CASE("weft goodput without failures trains in iterations times the iteration time", "[cli][goodput]") {
  const TempDir dir;
  const auto resilience = dir.write(
      "none.json", R"({"failures": {"causes": [{"name": "nothing", "observed": {"count": 0, "days": 1, "nodes": 1},)"
                   R"( "blast_radius": "none"}]}, "recovery": {"policy": "checkpoint-restart", "checkpoint":)"
                   R"( {"interval_minutes": "none", "write_GBps": 1, "read_GBps": 1}, "restart_minutes": 10}})");
  const auto run = run_weft("goodput '" + kScenario + "' " + quoted(resilience) + " --seeds 2 --tokens 1e11 --json " +
                            quoted(dir.file("g.json")));
  INFO(run.err);
  REQUIRE(run.exit_code == 0);
  const auto json = nlohmann::json::parse(read_file(dir.file("g.json")));
  const double iterations = std::ceil(1e11 / json["tokens_per_iteration"].get<double>());
  CHECK(json["wall_days"]["mean"].get<double>() * 86400.0 ==
        Approx(iterations * json["iteration_time_s"].get<double>()).epsilon(1e-12));
  CHECK(json["interruptions"]["mean"] == 0.0);
}

TEST_CASE("weft goodput refuses bad input with exit 2 and leaves no file", "[cli][goodput]") {
  const TempDir dir;
  const auto rejects = [&](const std::string& arguments, const std::string& message) {
    const auto run = run_weft("goodput " + arguments + " --json " + quoted(dir.file("g.json")));
    CHECK(run.exit_code == 2);
    CHECK_THAT(run.err, StartsWith("weft: error: ") && Contains(message));
    CHECK(run.out.empty());
    CHECK_FALSE(std::filesystem::exists(dir.file("g.json")));
  };
  const auto bad = dir.write("bad.json", R"({"failures": {"causes": [{"name": "x", "mtbf_hours": 5, "per": "gpu",)"
                                         R"( "blast_radius": "node"}]}, "recovery": {}})");
  rejects("'" + kScenario + "' " + quoted(bad), "bad.json: failures.causes[0]: expected repair_hours");
  rejects("'" + kScenario + "' '" + kResilience + "' --checkpoint-interval soon",
          "--checkpoint-interval: 'soon' is not a positive number of minutes");
  rejects("'" + kScenario + "' " + quoted(dir.file("missing.json")), "missing.json");
  rejects("'" + test::experiment("gpt3-2.7b-30xa40-oobleck") + "' '" + WEFT_SOURCE_DIR +
              "/scenarios/resilience/oobleck-every-1h.json' --hot-spares 2",
          "--hot-spares: oobleck trains on every healthy node");
  const std::string bamboo_every_hour = WEFT_SOURCE_DIR "/scenarios/resilience/bamboo-every-1h.json";
  rejects("'" + test::experiment("gpt3-2.7b-30xa40-oobleck") + "' '" + bamboo_every_hour + "'",
          "bamboo: Bamboo trains without activation recomputation");
  rejects("'" + test::experiment("gpt3-6.7b-30xa40-bamboo") + "' '" + bamboo_every_hour + "'",
          "the plan runs out of memory (weft simulate shows where): no run to study");
  rejects("'" + test::experiment("llama3-8b-128xh100-fsdp-hybrid") + "' '" + WEFT_SOURCE_DIR +
              "/scenarios/resilience/varuna-every-1h.json'",
          "varuna: its plans change the data-parallel ranks, which hybrid sharding's fixed shard groups");
  const auto storm = dir.write("storm.json", R"({"failures": {"causes": [{"name": "x", "mtbf_hours": 1e-6,)"
                                             R"( "per": "node", "blast_radius": "none"}]}, "recovery":)"
                                             R"( {"policy": "checkpoint-restart", "checkpoint": {"interval_minutes":)"
                                             R"( 30, "write_GBps": 1, "read_GBps": 1}, "restart_minutes": 1}})");
  rejects("'" + kScenario + "' " + quoted(storm), "failures a run of 30 days, more than weft simulates");
  const auto busy = dir.write("busy.json", R"({"failures": {"planned": [{"name": "x", "mtbf_hours": 1e-3,)"
                                           R"( "per": "node", "hours": 0}]}, "recovery":)"
                                           R"( {"policy": "checkpoint-restart", "checkpoint": {"interval_minutes":)"
                                           R"( 30, "write_GBps": 1, "read_GBps": 1}, "restart_minutes": 1}})");
  rejects("'" + kScenario + "' " + quoted(busy),
          "failures.planned: about 1.47e+09 planned stops a run of 30 days, more than weft simulates");
  const auto unplanned =
      dir.write("unplanned.json", R"({"failures": {"planned": [{"name": "x", "mtbf_hours": 100, "per": "node"}]},)"
                                  R"( "recovery": {}})");
  rejects("'" + kScenario + "' " + quoted(unplanned),
          "unplanned.json: failures.planned[0]: missing required field 'hours'");
  const auto run = run_weft("goodput '" + kScenario + "' '" + kResilience + "' --seeds 0");
  CHECK(run.exit_code == 2);
  CHECK_THAT(run.err, Contains("--seeds"));
}

TEST_CASE("Ctrl-C stops weft goodput after the run under way and writes nothing", "[cli][goodput][interrupt]") {
  const TempDir dir;
  // Minutes of runs: the interval search alone simulates 100,000 seeds at each interval it tries.
  test::BackgroundWeft running({"goodput", kScenario, kResilience, "--seeds", "100000", "--json",
                                dir.file("g.json").string(), "--csv", dir.file("g.csv").string()});
  const auto stopped = running.interrupt(SIGINT);
  INFO(stopped.err);
  CHECK(stopped.after_signal < std::chrono::seconds(30));
  CHECK(stopped.killed_by(SIGINT));  // a shell's status 130
  CHECK_THAT(stopped.err, Contains("weft goodput: interrupted while searching checkpoint intervals, after ") &&
                              Contains(" runs; no output written"));
  CHECK(stopped.out.empty());
  CHECK(std::filesystem::is_empty(dir.path()));
}

TEST_CASE("weft goodput runs Oobleck through a trace of lost nodes", "[cli][goodput]") {
  const TempDir dir;
  const auto run = run_weft("goodput '" + test::experiment("gpt3-2.7b-30xa40-oobleck") + "' '" + WEFT_SOURCE_DIR +
                            "/scenarios/resilience/oobleck-every-1h.json' --seeds 3 --json " +
                            quoted(dir.file("g.json")) + " --csv " + quoted(dir.file("g.csv")));
  INFO(run.err);
  REQUIRE(run.exit_code == 0);
  CHECK_THAT(run.out, Contains("oobleck, f = 1") && Contains("15 events of a trace") && Contains("reconfigurations") &&
                          Contains("degraded throughput (h)"));
  const auto json = nlohmann::json::parse(read_file(dir.file("g.json")));
  CHECK(json["policy"] == "oobleck");
  // 15 nodes lost, each a reconfiguration; the job never stops.
  CHECK(json["reconfigurations"]["mean"] == 15.0);
  CHECK(json["interruptions"]["mean"] == 0.0);
  double hours = 0.0;
  for (const auto& [name, spread] : json["hours"].items()) hours += spread["mean"].get<double>();
  CHECK(hours == Approx(16.0).epsilon(1e-6));
  CHECK(json["hours"]["degraded throughput"]["mean"].get<double>() > 0.0);
  CHECK_THAT(read_file(dir.file("g.csv")),
             StartsWith("seed,wall_s,goodput_tokens_per_s,") && Contains("reconfigurations"));
}

TEST_CASE("weft goodput: a checkpoint-restart job that checkpoints on a preemption's notice loses less",
          "[cli][goodput]") {
  const TempDir dir;
  dir.write("lost.csv", "hours,nodes,down_hours\n1.25,1,\n");  // one node lost for good at 75 min
  const auto study = [&](bool on_notice) {
    const std::string name = on_notice ? "on.json" : "off.json";
    const auto file = dir.write(name, fmt::format(R"({{"failures": {{"trace": "lost.csv", "notice_seconds": 60}},
            "recovery": {{"policy": "checkpoint-restart", "checkpoint": {{"interval_minutes": 30, "write_GBps": 10,
              "read_GBps": 10, "on_notice": {}}}, "restart_minutes": 5, "hot_spare_nodes": 2}},
            "run": {{"days": 0.125, "seeds": 1}}}})",
                                                  on_notice));
    const auto run = run_weft("goodput '" + test::experiment("gpt3-2.7b-30xa40-oobleck") + "' " + quoted(file) +
                              " --json " + quoted(dir.file("g" + name)));
    INFO(run.err);
    REQUIRE(run.exit_code == 0);
    CHECK((run.out.find("also on each failure's notice, 60.0 s ahead, which the write fits") != std::string::npos) ==
          on_notice);
    return nlohmann::json::parse(read_file(dir.file("g" + name)));
  };
  const auto on = study(true);
  const auto off = study(false);
  const double iteration_s = on["iteration_time_s"].get<double>();
  const double lost_on_s = on["hours"]["training lost"]["mean"].get<double>() * 3600.0;
  const double lost_off_s = off["hours"]["training lost"]["mean"].get<double>() * 3600.0;
  // The 3.2 s write fits in the minute's notice: only the iteration under way is lost, where the
  // job that ignores the notice loses every whole iteration since its last checkpoint besides.
  CHECK(lost_on_s > 0.0);
  CHECK(lost_on_s < iteration_s);
  const double whole_iterations = (lost_off_s - lost_on_s) / iteration_s;
  CHECK(whole_iterations > 10.0);
  CHECK(whole_iterations == Approx(std::round(whole_iterations)).margin(1e-6));
  CHECK(on["checkpoints"]["mean"] == off["checkpoints"]["mean"].get<double>() + 1.0);
}

TEST_CASE("weft goodput: Varuna morphs onto a node back from repair unless told not to", "[cli][goodput]") {
  const TempDir dir;
  dir.write("back.csv", "hours,nodes,down_hours\n1,1,1\n");  // one node out from 1 h to 2 h
  const auto study = [&](bool morph) {
    const std::string name = morph ? "on.json" : "off.json";
    const auto file = dir.write(name, fmt::format(R"({{"failures": {{"trace": "back.csv"}},
            "recovery": {{"policy": "varuna", "checkpoint": {{"interval_iterations": 10, "write_GBps": 10,
              "read_GBps": 10}}, "restart_minutes": 5, "morph_on_return": {}}}, "run": {{"days": 0.125, "seeds": 1}}}})",
                                                  morph));
    const auto run = run_weft("goodput '" + test::experiment("gpt3-2.7b-30xa40-oobleck") + "' " + quoted(file) +
                              " --json " + quoted(dir.file("g" + name)));
    INFO(run.err);
    REQUIRE(run.exit_code == 0);
    CHECK_THAT(run.out, Contains(morph ? "morphs again when nodes back from repair make a faster layout"
                                       : "nodes back from repair join at the next restart"));
    CHECK_THAT(run.out, Contains("reconfigurations"));
    return nlohmann::json::parse(read_file(dir.file("g" + name)));
  };
  const auto on = study(true);
  const auto off = study(false);
  const auto hours = [](const nlohmann::json& json, const char* part) {
    return json["hours"][part]["mean"].get<double>();
  };
  // One restart after the loss; with the morph a second one onto the 30 nodes, each 5 min and a
  // reload of the 29.63 GiB checkpoint at 10 GB/s.
  const double restart_h = (300.0 + 29.63 * (1 << 30) / 1e10) / 3600.0;
  CHECK(on["reconfigurations"]["mean"] == 1.0);
  CHECK(off["reconfigurations"]["mean"] == 0.0);
  CHECK(hours(on, "restarts and reloads") == Approx(2 * restart_h).epsilon(1e-3));
  CHECK(hours(off, "restarts and reloads") == Approx(restart_h).epsilon(1e-3));
  // Without it the job trains on 29 nodes' layout to the end: degraded for two hours, not one.
  CHECK(hours(off, "degraded throughput") > 1.9 * hours(on, "degraded throughput"));
}

TEST_CASE("weft goodput: slowdowns of a GPU slow the job as much as the stage they hit allows", "[cli][goodput]") {
  const TempDir dir;
  const auto file = dir.write("slow.json", R"({"failures": {"slowdowns": [{"name": "throttled", "mtbf_hours": 100,
      "per": "node", "hours": 4, "speed": 0.6}]}, "recovery": {"policy": "checkpoint-restart", "checkpoint":
      {"interval_minutes": 60, "write_GBps": 100, "read_GBps": 100}, "restart_minutes": 5}, "run": {"days": 3}})");
  const auto run = run_weft("goodput '" + test::experiment("llama3-70b-512xh100") + "' " + quoted(file) +
                            " --seeds 4 --json " + quoted(dir.file("g.json")));
  INFO(run.err);
  REQUIRE(run.exit_code == 0);
  CHECK_THAT(run.out,
             Contains("Slowdowns        throttled: every 93.8 min on the job's nodes, for 4.00 h, a GPU at 60% "
                      "speed: the job at ") &&
                 Contains("degraded throughput (h)"));
  const auto json = nlohmann::json::parse(read_file(dir.file("g.json")));
  // One rate per pipeline stage (pp 4): the slowed GPU's kernels take 1/0.6 as long, the
  // communication no longer, so the job keeps between 60% and all of its rate.
  const auto& rates = json["slowdowns"][0]["job_rate_by_stage"];
  REQUIRE(rates.size() == 4);
  for (const auto& rate : rates) {
    CHECK(rate.get<double>() >= 0.6);
    CHECK(rate.get<double>() < 1.0);
  }
  // Nothing fails: the hours are training, checkpoints and what the slowdowns cost.
  CHECK(json["interruptions"]["mean"] == 0.0);
  CHECK(json["hours"]["degraded throughput"]["mean"].get<double>() > 0.0);
  CHECK(json["hours"]["training kept"]["mean"].get<double>() + json["hours"]["checkpoints"]["mean"].get<double>() +
            json["hours"]["degraded throughput"]["mean"].get<double>() ==
        Approx(72.0).epsilon(1e-9));
  const auto oobleck = run_weft("goodput '" + test::experiment("gpt3-2.7b-30xa40-oobleck") + "' " +
                                quoted(dir.write("o.json", R"({"failures": {"slowdowns": [{"name": "x", "mtbf_hours":
      10, "per": "node", "hours": 1, "speed": 0.5}]}, "recovery": {"policy": "oobleck", "fault_tolerance": 1,
      "reconfigure_seconds": 30, "checkpoint": {"interval_minutes": "none", "write_GBps": 1, "read_GBps": 1},
      "restart_minutes": 1}})")));
  CHECK(oobleck.exit_code == 2);
  CHECK_THAT(oobleck.err, Contains("o.json: failures.slowdowns: apply to the checkpoint-restart policy only; oobleck "
                                   "changes the layout the slowed GPU is in"));
}

TEST_CASE("weft goodput runs Bamboo through a trace of lost nodes", "[cli][goodput][bamboo]") {
  const TempDir dir;
  const auto run =
      run_weft("goodput '" + test::experiment("bert-large-30xa40-bamboo") + "' '" + WEFT_SOURCE_DIR +
               "/scenarios/resilience/bamboo-every-1h.json' --seeds 3 --json " + quoted(dir.file("g.json")));
  INFO(run.err);
  REQUIRE(run.exit_code == 0);
  CHECK_THAT(run.out,
             Contains("bamboo: redundant computation in 2 pipelines of 15 stages (8192 samples an iteration)") &&
                 Contains("reconfigurations") && Contains("degraded throughput (h)"));
  const auto json = nlohmann::json::parse(read_file(dir.file("g.json")));
  CHECK(json["policy"] == "bamboo");
  // 15 of 30 nodes lost: some ridden through, the rest fatal, as the stages they hit fall.
  CHECK(json["reconfigurations"]["mean"].get<double>() >= 1.0);
  CHECK(json["reconfigurations"]["mean"].get<double>() + json["interruptions"]["mean"].get<double>() <= 15.0);
  double hours = 0.0;
  for (const auto& [name, spread] : json["hours"].items()) hours += spread["mean"].get<double>();
  CHECK(hours == Approx(16.0).epsilon(1e-6));
}

}  // namespace
}  // namespace weft
