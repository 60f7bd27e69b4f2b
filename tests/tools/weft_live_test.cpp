// `weft live` on two MPI ranks of this machine.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <map>
#include <set>

#include "tests/support/cpu_scenario.hpp"
#include "tests/support/run_command.hpp"

namespace weft {
namespace {

using Catch::Matchers::Contains;
using test::read_file;
using test::run_weft;
using test::run_weft_mpi;
using test::TempDir;

// Writes the execution plan of `scenario_text` (by default the tiny GPT under `parallel`) to
// plan.json in `dir`.
std::filesystem::path emit_plan(const TempDir& dir, const std::string& parallel, std::string scenario_text = "") {
  if (scenario_text.empty()) scenario_text = test::tiny_gpt_scenario(parallel);
  const auto scenario = dir.write("scenario.json", scenario_text);
  const auto plan = dir.file("plan.json");
  const auto run = run_weft("simulate '" + scenario.string() + "' --emit-plan '" + plan.string() + "'");
  INFO(run.err);
  REQUIRE(run.exit_code == 0);
  return plan;
}

// Per rank (pid rank + 1): one span per op and per transfer of its program, named as in the
// plan; compute-stream spans one after another, all inside the iteration.
void expect_spans_of_programs(const nlohmann::json& plan, const nlohmann::json& trace, int ranks) {
  const auto makespan = trace["otherData"]["makespan_ns"].get<std::int64_t>();
  for (int rank = 0; rank < ranks; ++rank) {
    INFO("rank " << rank);
    const auto& program = plan["programs"][plan["program_of_rank"][rank].get<std::size_t>()];
    std::multiset<std::string> expected;
    for (const auto& action : program["actions"]) {
      for (const auto& op : action.value("ops", nlohmann::json::array()))
        expected.insert(op["name"].get<std::string>());
      if (action["action"] == "isend" || action["action"] == "irecv")
        expected.insert(action["name"].get<std::string>());
    }
    std::map<int, std::string> threads;
    for (const auto& e : trace["traceEvents"]) {
      if (e["ph"] == "M" && e["name"] == "thread_name" && e["pid"] == rank + 1) threads[e["tid"]] = e["args"]["name"];
    }
    std::multiset<std::string> traced;
    double compute_end = 0.0;
    for (const auto& e : trace["traceEvents"]) {
      if (e["ph"] != "X" || e["pid"] != rank + 1) continue;
      traced.insert(e["name"].get<std::string>());
      const double ts = e["ts"], dur = e["dur"];
      CHECK(ts >= 0.0);
      CHECK(dur >= 0.0);
      CHECK(ts + dur <= static_cast<double>(makespan) / 1000.0 + 1.0);
      if (threads[e["tid"]] == "compute") {
        CHECK(ts >= compute_end - 0.002);  // microsecond rounding
        compute_end = ts + dur;
      }
    }
    CHECK(traced == expected);
  }
}

TEST_CASE("weft live runs a pipeline plan on two ranks and traces every op of it", "[cli][live][mpi]") {
  const TempDir dir;
  const auto plan_file = emit_plan(dir, R"({"pp": 2})");
  const auto trace_file = dir.file("measured.json");
  const auto run = run_weft_mpi(
      2, "live '" + plan_file.string() + "' --warmup 1 --iterations 2 --trace '" + trace_file.string() + "'");
  INFO(run.err);
  REQUIRE(run.exit_code == 0);
  CHECK_THAT(run.out, Contains("Iteration time") && Contains("median of 2"));
  // Megatron-Core's 50 us a layer pass: rank 0 holds 1 layer, 4 microbatches, forward and backward.
  CHECK_THAT(run.out, Contains("Framework        400.000 us of the stack's framework time in 8 ops on rank 0"));

  const auto plan = nlohmann::json::parse(read_file(plan_file));
  const auto trace = nlohmann::json::parse(read_file(trace_file));
  const auto& measured = trace["otherData"]["measured"];
  REQUIRE(measured["iteration_ns"].size() == 2);
  const auto makespan = trace["otherData"]["makespan_ns"].get<std::int64_t>();
  CHECK(makespan == measured["iteration_ns"][measured["traced_iteration"].get<std::size_t>()].get<std::int64_t>());
  CHECK(measured["simulated_iteration_ns"] == plan["simulated_iteration_ns"]);
  // The iteration is timed on the spans' clock: it ends when the last op of the slower rank does.
  double last_end_us = 0.0;
  for (const auto& e : trace["traceEvents"]) {
    if (e["ph"] == "X") last_end_us = std::max(last_end_us, e["ts"].get<double>() + e["dur"].get<double>());
  }
  CHECK(last_end_us == Approx(static_cast<double>(makespan) / 1000.0).margin(0.002));

  expect_spans_of_programs(plan, trace, 2);
}

TEST_CASE("weft live runs a plan of a model of several modules", "[cli][live][mpi][multimodal]") {
  // The ViT and its projector on rank 0; the language model on ranks 1 and 2, which hold its
  // embedding table and its head and reduce their tied gradients together, without rank 0.
  const TempDir dir;
  const auto plan_file =
      emit_plan(dir, "",
                test::tiny_vlm_scenario(R"({"pp": 3, "modality_stages": {"vision": 1, "language": 2}})",
                                        test::test_cpu_cluster(3)));
  const auto trace_file = dir.file("measured.json");
  const auto run = run_weft_mpi(
      3, "live '" + plan_file.string() + "' --warmup 0 --iterations 1 --trace '" + trace_file.string() + "'");
  INFO(run.err);
  REQUIRE(run.exit_code == 0);
  CHECK(nlohmann::json::parse(read_file(plan_file))["embedding_stage"] == 1);
  const auto trace = nlohmann::json::parse(read_file(trace_file));
  std::map<int, int> vision, embedding;  // spans per rank (pid rank + 1)
  for (const auto& e : trace["traceEvents"]) {
    if (e["ph"] != "X") continue;
    const std::string name = e["name"];
    vision[e["pid"]] += name.find("/vision.") != std::string::npos ? 1 : 0;
    embedding[e["pid"]] += name == "embedding grad all-reduce" ? 1 : 0;
  }
  CHECK(vision == std::map<int, int>{{1, vision[1]}, {2, 0}, {3, 0}});
  CHECK(vision[1] > 0);
  CHECK(embedding == std::map<int, int>{{1, 0}, {2, 1}, {3, 1}});
}

// Transfer spans per rank (pid rank + 1) and op class, by what they move ("send activation", "send
// gradient", or through DFLOP's communicator on per-sample data "relay activation", "relay
// gradient"), in the measured trace of `plan_file` run on `ranks` ranks.
std::map<int, std::map<std::string, int>> live_transfers(const TempDir& dir, const std::filesystem::path& plan_file,
                                                         int ranks) {
  const auto trace_file = dir.file("measured.json");
  const auto run = run_weft_mpi(
      ranks, "live '" + plan_file.string() + "' --warmup 0 --iterations 1 --trace '" + trace_file.string() + "'");
  INFO(run.err);
  REQUIRE(run.exit_code == 0);
  const auto trace = nlohmann::json::parse(read_file(trace_file));
  std::map<int, std::map<std::string, int>> transfers;
  for (const auto& e : trace["traceEvents"]) {
    const std::string name = e["name"];
    if (e["ph"] == "X" && (name.rfind("send ", 0) == 0 || name.rfind("relay ", 0) == 0))
      ++transfers[e["pid"]][name.substr(0, name.find(" mb")) + " " + e["args"]["class"].get<std::string>()];
  }
  return transfers;
}

using Transfers = std::map<std::string, int>;
constexpr int kTinyMicrobatches = 4;

TEST_CASE("weft live runs modules on meshes of their own", "[cli][live][mpi][meshes]") {
  // The ViT at TP1 on rank 0, the language model at TP2 on ranks 1 and 2 (DFLOP's per-module TP):
  // the encoder's rank sends each activation to both TP ranks at once and receives each gradient
  // from the one at tp 0; the one at tp 1 only receives.
  const TempDir dir;
  const auto plan_file = emit_plan(dir, "",
                                   test::tiny_vlm_scenario(R"({"pp": 2, "tp": 2, "dp": 1, "modality_stages":
                                                             {"vision": 1, "language": 1},
                                                             "modules": {"vision": {"tp": 1}}})",
                                                           test::test_cpu_cluster(3)));
  const auto transfers = live_transfers(dir, plan_file, 3);
  const int m = kTinyMicrobatches;
  CHECK(transfers.at(1) == Transfers{{"send activation send", m}, {"send gradient recv", m}});
  CHECK(transfers.at(2) == Transfers{{"send activation recv", m}, {"send gradient send", m}});
  CHECK(transfers.at(3) == Transfers{{"send activation recv", m}});
}

TEST_CASE("weft live relays between meshes of different DP through DFLOP's communicator", "[cli][live][mpi][meshes]") {
  // The ViT on two replicas at TP1 (ranks 0 and 1), the language model on one at TP2 (ranks 2 and
  // 3): rank 0 gathers replica 1's half of each slot and sends the slot to both LLM ranks; back,
  // the LLM's tp 0 rank gives rank 0 the gradient, which hands replica 1 its half.
  const TempDir dir;
  const auto plan_file = emit_plan(dir, "",
                                   test::tiny_vlm_scenario(R"({"pp": 2, "tp": 2, "dp": 1, "modality_stages":
                                                             {"vision": 1, "language": 1},
                                                             "modules": {"vision": {"tp": 1, "dp": 2}}})",
                                                           test::test_cpu_cluster(4)));
  const auto transfers = live_transfers(dir, plan_file, 4);
  const int m = kTinyMicrobatches;
  CHECK(transfers.at(1) == Transfers{{"send activation send", m}, {"send gradient recv", m}});
  CHECK(transfers.at(2) == Transfers{{"send activation send", m}, {"send gradient recv", m}});
  CHECK(transfers.at(3) == Transfers{{"send activation recv", m}, {"send gradient send", m}});
  CHECK(transfers.at(4) == Transfers{{"send activation recv", m}});
}

TEST_CASE("weft live relays each slot of per-sample data between meshes of different DP",
          "[cli][live][mpi][meshes][data]") {
  // As above, on per-sample data: each encoder replica has a program of its own, and each slot's
  // relay is one transfer of every program (the slot's own images), messages as above.
  std::string scenario = test::tiny_vlm_scenario(R"({"pp": 2, "tp": 2, "dp": 1, "modality_stages":
                                                   {"vision": 1, "language": 1},
                                                   "modules": {"vision": {"tp": 1, "dp": 2}}})",
                                                 test::test_cpu_cluster(4));
  scenario.insert(scenario.rfind('}'),
                  R"(, "data": {"dataset": "image-text-mix", "seed": 1, "pad_to": 16, "pack": true})");
  const TempDir dir;
  const auto plan_file = emit_plan(dir, "", scenario);
  // Simulated ranks: the encoder's replica 0, the language model's, the encoder's replica 1.
  CHECK(nlohmann::json::parse(read_file(plan_file))["program_of_rank"] == nlohmann::json::array({0, 2, 1, 1}));
  const auto transfers = live_transfers(dir, plan_file, 4);
  const int m = kTinyMicrobatches;
  CHECK(transfers.at(1) == Transfers{{"relay activation send", m}, {"relay gradient recv", m}});
  CHECK(transfers.at(2) == Transfers{{"relay activation send", m}, {"relay gradient recv", m}});
  CHECK(transfers.at(3) == Transfers{{"relay activation recv", m}, {"relay gradient send", m}});
  CHECK(transfers.at(4) == Transfers{{"relay activation recv", m}});
}

TEST_CASE("weft live runs a plan on per-sample data, each DP replica its own programs", "[cli][live][mpi][data]") {
  // Two stages of two replicas on four ranks: rank = replica + 2 x stage.
  std::string scenario = test::tiny_vlm_scenario(R"({"pp": 2, "dp": 2})", test::test_cpu_cluster(4));
  scenario.insert(scenario.rfind('}'),
                  R"(, "data": {"dataset": "image-text-mix", "seed": 1, "pad_to": 16, "pack": true})");
  const TempDir dir;
  const auto plan_file = emit_plan(dir, "", scenario);
  const auto plan = nlohmann::json::parse(read_file(plan_file));
  CHECK(plan["program_of_rank"] == nlohmann::json::array({0, 2, 1, 3}));
  const auto trace_file = dir.file("measured.json");
  const auto run = run_weft_mpi(
      4, "live '" + plan_file.string() + "' --warmup 0 --iterations 1 --trace '" + trace_file.string() + "'");
  INFO(run.err);
  REQUIRE(run.exit_code == 0);
  expect_spans_of_programs(plan, nlohmann::json::parse(read_file(trace_file)), 4);
}

TEST_CASE("a plan for another number of ranks is refused by every rank", "[cli][live][mpi]") {
  const TempDir dir;
  const auto plan_file = emit_plan(dir, R"({"tp": 2})");
  const auto trace_file = dir.file("measured.json");
  const auto alone = run_weft("live '" + plan_file.string() + "' --trace '" + trace_file.string() + "'");
  CHECK(alone.exit_code == 2);
  CHECK_THAT(alone.err, Contains("plan.json: the plan is for 2 ranks but 1 is running (start it with mpirun -np 2)"));
  const auto three = run_weft_mpi(3, "live '" + plan_file.string() + "' --trace '" + trace_file.string() + "'");
  CHECK(three.exit_code == 2);
  CHECK_THAT(three.err, Contains("the plan is for 2 ranks but 3 are running"));
  CHECK_FALSE(std::filesystem::exists(trace_file));
}

TEST_CASE("when a rank dies the others end within seconds", "[cli][live][mpi]") {
  const TempDir dir;
  const auto plan_file = emit_plan(dir, R"({"pp": 2})");
  // Rank 1 is killed two seconds into a run that would take minutes.
  const std::string program =
      "sh -c 'if [ \"$OMPI_COMM_WORLD_RANK\" = 1 ]; then (sleep 2; kill -9 $$) & fi; exec \"$WEFT\" "
      "live " +
      plan_file.string() + " --iterations 100000'";
  const auto start = std::chrono::steady_clock::now();
  const auto run = test::run_mpi(2, program);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  INFO(run.err);
  CHECK(run.exit_code != 0);
  CHECK(seconds < 30.0);
}

TEST_CASE("a rank whose peer never answers gives up after the timeout", "[cli][live][mpi]") {
  const TempDir dir;
  const auto plan_file = emit_plan(dir, R"({"pp": 2})");
  // Stage 1 never receives the first activation stage 0 sends (16 KiB: too large to be sent
  // before the receiver asks for it).
  auto plan = nlohmann::json::parse(read_file(plan_file));
  auto& actions = plan["programs"][1]["actions"];
  const auto first_receive =
      std::find_if(actions.begin(), actions.end(), [](const auto& a) { return a["action"] == "irecv"; });
  REQUIRE(first_receive != actions.end());
  const auto transfer = (*first_receive)["transfer"];
  actions.erase(std::remove_if(actions.begin(), actions.end(),
                               [&](const auto& a) { return a.contains("transfer") && a["transfer"] == transfer; }),
                actions.end());
  const auto doctored = dir.write("doctored.json", plan.dump());
  const auto start = std::chrono::steady_clock::now();
  const auto run = run_weft_mpi(2, "live '" + doctored.string() + "' --timeout 2");
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  CHECK(run.exit_code == 1);
  // Both ranks wait with the same timeout: rank 0 on the send nobody receives, rank 1 on the next
  // activation, which rank 0 never gets to send. Whichever gives up first aborts the job.
  CHECK_THAT(run.err,
             Contains("weft: internal error: rank 0: timed out waiting for send of 16384 bytes to rank 1") ||
                 Contains("weft: internal error: rank 1: timed out waiting for recv of 16384 bytes from rank 0"));
  // The message shows the timeout fired; the bound shows nothing waits past it for long. It is
  // loose because the ranks compute for a while before the lost transfer: about 15 s under the
  // sanitizers on an idle machine, twice that beside other tests (without the timeout the run
  // never ends).
  CHECK(seconds < 120.0);
}

}  // namespace
}  // namespace weft
