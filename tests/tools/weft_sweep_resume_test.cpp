// `weft sweep` and `weft plan` stopped by a signal, and `weft sweep --resume`, through the real
// binary run in the background.
#include <catch2/catch.hpp>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <thread>

#include "tests/support/background_weft.hpp"
#include "tests/support/cli_expectations.hpp"
#include "tests/support/run_command.hpp"

namespace weft {
namespace {

using Catch::Matchers::Contains;
using test::BackgroundWeft;
using test::read_file;
using test::run_weft;
using test::TempDir;

// 113 plans to simulate (23 of them out of memory), a second's work on one thread.
const std::string kScenario = test::experiment("llama3-70b-512xh100");
const std::string kResumeGrid = "tp=4,8 pp=4,8,16 cp=1 vpp=1,2 mb=1,2 zero=1 recompute=none,full";

// Rows of plans in a journal: the lines that start with a quoted label.
std::size_t journal_rows(const std::filesystem::path& file) {
  std::ifstream in(file);
  std::size_t rows = 0;
  for (std::string line; std::getline(in, line);) rows += line.starts_with('"') ? 1 : 0;
  return rows;
}

// Files in `dir` other than `kept`.
std::vector<std::string> files_besides(const TempDir& dir, const std::vector<std::string>& kept) {
  std::vector<std::string> files;
  for (const auto& entry : std::filesystem::directory_iterator(dir.path())) {
    const std::string name = entry.path().filename().string();
    if (std::find(kept.begin(), kept.end(), name) == kept.end()) files.push_back(name);
  }
  return files;
}

TEST_CASE("Ctrl-C stops an incremental sweep with no partial output, --resume finishes it as a clean run",
          "[cli][sweep][interrupt]") {
  const TempDir dir;
  const std::string& scenario = kScenario;
  auto outputs = [&](const std::string& name) {
    return " --csv '" + dir.file(name + ".csv").string() + "' --json '" + dir.file(name + ".json").string() +
           "' --html '" + dir.file(name + ".html").string() + "'";
  };
  auto sweep = [&](const std::string& flags) { return run_weft("sweep '" + scenario + "' " + flags); };
  const auto clean = sweep("--grid '" + kResumeGrid + "' --threads 2" + outputs("clean"));
  INFO(clean.err);
  REQUIRE(clean.exit_code == 0);

  const std::string partial = dir.file("p.csv.partial").string();
  BackgroundWeft running({"sweep", scenario, "--grid", kResumeGrid, "--threads", "1", "--incremental", "--csv",
                          dir.file("p.csv").string(), "--json", dir.file("p.json").string(), "--html",
                          dir.file("p.html").string()});
  REQUIRE(running.wait_until([&] { return journal_rows(partial) >= 2; }));
  running.send(SIGINT);
  const auto stopped = running.wait();
  INFO(stopped.err);
  CHECK(stopped.killed_by(SIGINT));  // a shell's status 130
  CHECK_THAT(stopped.err, Contains("weft sweep: interrupted after ") && Contains(" plans; no output written; the ") &&
                              Contains(" plans done are in " + partial + ": rerun with --resume to finish"));
  // No output, partial or temporary: only the journal.
  CHECK(files_besides(dir, {"clean.csv", "clean.json", "clean.html"}) == std::vector<std::string>{"p.csv.partial"});
  const std::string journal = read_file(partial);
  const std::size_t rows = journal_rows(partial);

  // The journal is resumed only by the sweep that wrote it, and only as it was written.
  const auto other_grid = sweep("--grid '" + kResumeGrid + " mb=1' --resume" + outputs("p"));
  CHECK(other_grid.exit_code == 2);
  CHECK_THAT(other_grid.err,
             Contains("weft: error: --resume: " + partial + ": line 6: the journal is for grid 'tp=4,8 pp=4,8,16") &&
                 Contains("it is another sweep's journal"));
  // Which plans are pruned depends on --top: another --top (or --all) is another sweep.
  const auto other_top = sweep("--grid '" + kResumeGrid + "' --top 3 --resume" + outputs("p"));
  CHECK(other_top.exit_code == 2);
  CHECK_THAT(other_top.err, Contains(": line 7: the journal is for pruning 'beyond the top 10', this sweep for "
                                     "pruning 'beyond the top 3'"));
  const std::string copy = dir.file("q.csv.partial").string();
  std::ofstream(copy) << journal << "\"tp1\",2\n";
  const auto corrupt = sweep("--grid '" + kResumeGrid + "' --resume --csv '" + dir.file("q.csv").string() + "'");
  CHECK(corrupt.exit_code == 2);
  CHECK_THAT(corrupt.err, Contains("--resume: " + copy + ": line " + std::to_string(9 + rows) + ": 2 columns, not 26"));
  std::filesystem::remove(copy);
  CHECK(read_file(partial) == journal);

  const auto resumed = sweep("--grid '" + kResumeGrid + "' --threads 2 --resume" + outputs("p"));
  INFO(resumed.err);
  REQUIRE(resumed.exit_code == 0);
  CHECK_THAT(resumed.out, Contains("Resumed from " + partial + ": " + std::to_string(rows) + " plans"));
  for (const char* extension : {".csv", ".json", ".html"}) {
    CHECK(read_file(dir.file(std::string("p") + extension)) == read_file(dir.file(std::string("clean") + extension)));
  }
  CHECK_FALSE(std::filesystem::exists(partial));
}

TEST_CASE("SIGTERM stops a sweep without a journal: nothing is written", "[cli][sweep][interrupt]") {
  const TempDir dir;
  BackgroundWeft running({"sweep", kScenario, "--grid", kResumeGrid, "--threads", "1", "--csv",
                          dir.file("p.csv").string(), "--html", dir.file("p.html").string()});
  const auto stopped = running.interrupt(SIGTERM);
  INFO(stopped.err);
  CHECK(stopped.killed_by(SIGTERM));  // a shell's status 143
  CHECK_THAT(stopped.err, Contains("weft sweep: interrupted after ") &&
                              Contains(" plans; no output written; with --csv FILE --incremental, an interrupted sweep "
                                       "can be finished with --resume"));
  CHECK(files_besides(dir, {}).empty());
}

TEST_CASE("a second Ctrl-C ends weft at once, without waiting for the plan under way", "[cli][sweep][interrupt]") {
  const TempDir dir;
  // One plan, which takes seconds to simulate op by op.
  BackgroundWeft running({"sweep", test::experiment("llama3-405b-16384xh100"), "--gpus", "256", "--grid",
                          "tp=8 pp=16 cp=1 vpp=1 mb=1 zero=1 recompute=full schedule=1f1b sp=1", "--no-reuse",
                          "--threads", "1", "--csv", dir.file("p.csv").string()});
  REQUIRE(running.wait_until([&] { return running.catches(SIGINT); }));
  std::this_thread::sleep_for(std::chrono::seconds(1));
  running.send(SIGINT);
  REQUIRE(running.wait_until([&] { return !running.catches(SIGINT); }));  // the default action is back
  running.send(SIGINT);
  const auto killed = running.wait();
  CHECK(killed.killed_by(SIGINT));
  CHECK_THAT(killed.err, !Contains("interrupted"));  // it did not get to say so
  CHECK(files_besides(dir, {}).empty());
}

TEST_CASE("Ctrl-C stops weft plan's search at once and writes nothing", "[cli][plan][interrupt]") {
  const TempDir dir;
  BackgroundWeft running({"plan", test::experiment("vlm-s-16xh800-dip"), "--time-budget", "300", "--threads", "1",
                          "--json", dir.file("plan.json").string(), "--trace", dir.file("trace.json").string()});
  const auto stopped = running.interrupt(SIGINT);
  INFO(stopped.err);
  CHECK(stopped.after_signal < std::chrono::seconds(30));
  CHECK(stopped.killed_by(SIGINT));
  CHECK_THAT(stopped.err, Contains("weft plan: interrupted while planning, after ") &&
                              Contains(" expansions of the search in ") && Contains("; no output written"));
  CHECK(files_besides(dir, {}).empty());
}

TEST_CASE("weft sweep --incremental and --resume need --csv, and a journal where they expect one",
          "[cli][sweep][errors]") {
  const TempDir dir;
  auto rejected = [&](const std::string& flags, const std::string& message) {
    const auto run = run_weft("sweep '" + kScenario + "' --grid '" + kResumeGrid + "' " + flags);
    CHECK(run.exit_code == 2);
    CHECK_THAT(run.err, Contains("weft: error: " + message));
  };
  const std::string csv = dir.file("p.csv").string();
  rejected("--incremental", "--incremental: needs --csv FILE");
  rejected("--resume", "--resume: needs --csv FILE");
  rejected("--resume --csv '" + csv + "'",
           "--resume: " + csv + ".partial does not exist: there is no interrupted sweep to finish");
  dir.write("p.csv.partial", "");
  rejected("--incremental --csv '" + csv + "'",
           "--incremental: " + csv + ".partial exists, the plans of an interrupted sweep: finish it with --resume");
  rejected("--resume --csv '" + csv + "'", "--resume: " + csv + ".partial: its header is incomplete");
  CHECK(files_besides(dir, {"p.csv.partial"}).empty());
}

}  // namespace
}  // namespace weft
