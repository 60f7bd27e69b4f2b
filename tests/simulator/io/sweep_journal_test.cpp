// The journal of an incremental sweep: rows read back exactly, a sweep resumed from its journal ends
// as one never interrupted, and journals of other sweeps, changed by hand or cut short are handled.
#include "simulator/io/sweep_journal.hpp"

#include <fmt/format.h>
#include <catch2/catch.hpp>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "simulator/io/csv.hpp"
#include "simulator/io/sweep_html.hpp"
#include "simulator/io/sweep_journal_row.hpp"
#include "simulator/io/sweep_report_format.hpp"
#include "tests/simulator/workload/training_test_support.hpp"
#include "tests/support/run_command.hpp"

namespace weft {
namespace {

using Catch::Matchers::Contains;
using Catch::Matchers::EndsWith;
using Catch::Matchers::StartsWith;
using test::read_file;
using test::TempDir;

const std::string kScenario = R"({
    "model": {"name": "small", "layers": 4, "hidden": 1024, "ffn_hidden": 4096, "heads": 8, "vocab": 1000},
    "cluster": {"base": "dgx-h100", "gpus": 8},
    "training": {"global_batch": 8, "seq_len": 1024}})";
const SweepJournalInputs kInputs = {{"scenario", "0123456789abcdef"}, {"gpus", "8"}};

SweepResult enumerated() {
  SweepGrid grid;
  apply_grid_spec(grid, "tp=1,2 pp=1,2 cp=1 vpp=1 mb=1,2 recompute=none zero=0,1 schedule=gpipe,1f1b sp=1");
  return enumerate_sweep(test::sweep_scenario_from(kScenario), grid, 8);
}

std::string outputs_of(const SweepResult& sweep) {
  std::ostringstream out;
  write_sweep_csv(out, sweep);
  const TrainingScenario base = test::sweep_scenario_from(kScenario);
  out << sweep_json(base, 8, sweep).dump(2);
  write_sweep_html(out, base, 8, sweep, 5);
  return out.str();
}

void append(const std::filesystem::path& file, const std::string& text) {
  std::ofstream(file, std::ios::binary | std::ios::app) << text;
}

// A sweep of `enumerated()` stopped after `plans` plans, each recorded in the journal `file`.
SweepResult interrupted_sweep(const std::filesystem::path& file, std::size_t plans) {
  SweepResult sweep = enumerated();
  SweepJournalWriter journal(file, kInputs);
  std::size_t recorded = 0;
  SweepOptions options;
  options.on_simulated = [&](const PlanOutcome& plan) {
    journal.add(plan);
    ++recorded;
  };
  options.stop = [&] { return recorded >= plans; };
  simulate_sweep(sweep, options);
  return sweep;
}

TEST_CASE("a journal row reads back to the same numbers and the same row", "[sweep][journal]") {
  PlanOutcome plan = enumerated().plans.front();
  plan.status = PlanStatus::oom;
  plan.reason = "stage 1 peaks at \"1.5\", say";
  TrainingReport& report = plan.report.emplace();
  plan.stage_memory.clear();  // the estimate's
  report.iteration_time_s = 1.0 / 3.0;
  report.mfu = 0.1;
  report.tokens_per_s = 12345.678901234567;
  report.tflops_per_gpu = 1e-300;
  for (int s = 0; s < 2; ++s) {
    StageReport stage;
    stage.stage = s;
    stage.peak_memory = 81'000'000'123 + s;
    stage.compute_s = 0.2 / 3.0 + s;
    stage.bubble_s = 2.0 / 7.0;
    for (std::size_t k = 0; k < kCommGroupKindCount; ++k) stage.exposed_comm_s[k] = 1e-9 * static_cast<double>(k);
    plan.stage_memory.push_back(stage.peak_memory);
    report.stages.push_back(stage);
  }
  const std::string row = sweep_journal_row(plan);
  const PlanOutcome read = parse_sweep_journal_row(row);
  CHECK(read.label == plan.label);
  CHECK(read.status == PlanStatus::oom);
  CHECK(read.reason == plan.reason);
  CHECK(read.stage_memory == plan.stage_memory);
  CHECK(read.report->iteration_time_s == report.iteration_time_s);
  CHECK(read.report->tokens_per_s == report.tokens_per_s);
  CHECK(read.report->tflops_per_gpu == report.tflops_per_gpu);
  REQUIRE(read.report->stages.size() == 2);
  CHECK(read.report->stages[1].compute_s == report.stages[1].compute_s);
  CHECK(read.report->stages[1].exposed_comm_s == report.stages[1].exposed_comm_s);
  PlanOutcome again = plan;
  again.report = read.report;
  CHECK(sweep_journal_row(again) == row);

  CHECK_THROWS_WITH(parse_sweep_journal_row("\"a\",1,2"), Contains("3 columns, not 26"));
  std::string bad = row;
  bad.replace(bad.find(csv_number(report.mfu)), csv_number(report.mfu).size(), "high");
  CHECK_THROWS_WITH(parse_sweep_journal_row(bad), Contains("column mfu: 'high' is not a number"));
  bad = row;
  bad.replace(bad.find(",oom,"), 5, ",invalid,");
  CHECK_THROWS_WITH(parse_sweep_journal_row(bad), Contains("column status: 'invalid' is not ok or oom"));
}

TEST_CASE("a sweep resumed from its journal ends as a sweep never interrupted", "[sweep][journal]") {
  SweepResult clean = enumerated();
  simulate_sweep(clean, {});
  REQUIRE(clean.simulated > 6);

  const TempDir dir;
  const auto file = dir.file("p.csv.partial");
  const SweepResult stopped = interrupted_sweep(file, 3);
  CHECK(stopped.interrupted());
  const SweepJournal journal = read_sweep_journal(file, kInputs);
  CHECK(stopped.unfinished == stopped.simulated - static_cast<std::int64_t>(journal.rows.size()));
  CHECK(journal.rows.size() >= 3);
  CHECK(journal.whole_rows_size == std::filesystem::file_size(file));

  SweepResult resumed = enumerated();
  restore_journal_plans(resumed, journal, file);
  // Only the plans still to simulate count towards the sweep's size (--max-minutes).
  std::int64_t waiting_ops = 0;
  for (const PlanOutcome& plan : resumed.plans) {
    if (plan.status == PlanStatus::ok && !plan.simulated()) waiting_ops += plan.graph_ops;
  }
  CHECK(waiting_ops > 0);
  CHECK(resumed.estimated_graph_ops == waiting_ops);
  CHECK(resumed.estimated_graph_ops < clean.estimated_graph_ops);
  std::atomic<std::int64_t> simulated_now{0};
  SweepOptions options;
  options.threads = 2;
  options.on_simulated = [&](const PlanOutcome&) { ++simulated_now; };
  simulate_sweep(resumed, options);
  CHECK_FALSE(resumed.interrupted());
  CHECK(resumed.reused == static_cast<std::int64_t>(journal.rows.size()));
  CHECK(simulated_now == resumed.simulated - resumed.reused);
  CHECK(outputs_of(resumed) == outputs_of(clean));
}

TEST_CASE("a journal of other inputs, or changed by hand, is refused naming its line", "[sweep][journal][errors]") {
  const TempDir dir;
  const auto file = dir.file("p.csv.partial");
  interrupted_sweep(file, 2);
  const std::string text = read_file(file);
  // Line 1 says what the file is, lines 2 and 3 give the inputs, line 4 the columns; rows follow.
  const std::size_t first_row = text.find("\n\"") + 1;
  const std::size_t rows = read_sweep_journal(file, kInputs).rows.size();
  REQUIRE(rows >= 2);

  CHECK_THROWS_WITH(read_sweep_journal(file, {{"scenario", "0123456789abcdef"}, {"gpus", "16"}}),
                    Contains(file.string() + ": line 3: the journal is for gpus '8', this sweep for gpus '16'"));
  CHECK_THROWS_WITH(read_sweep_journal(file, {{"scenario", "0123456789abcdef"}}),
                    Contains("line 3: expected the columns label,tp,pp"));

  auto rewritten = [&](const std::string& name, const std::string& content) {
    const auto path = dir.file(name);
    std::ofstream(path, std::ios::binary) << content;
    return path;
  };
  CHECK_THROWS_WITH(read_sweep_journal(rewritten("a", "rank,tp\n1,2\n"), kInputs),
                    EndsWith("a: line 1: not a weft sweep journal"));
  CHECK_THROWS_WITH(read_sweep_journal(rewritten("b", text.substr(0, text.find('\n') + 1)), kInputs),
                    Contains("its header is incomplete"));
  CHECK_THROWS_WITH(read_sweep_journal(rewritten("c", text + "\"tp1\",1\n"), kInputs),
                    Contains(fmt::format("c: line {}: 2 columns, not 26", 5 + rows)));
  // The file's text read as the file is, named as the caller says.
  CHECK(parse_sweep_journal(text, "p", kInputs).rows.size() == rows);
  CHECK_THROWS_WITH(parse_sweep_journal(text + "\"tp1\",1\n", "text", kInputs),
                    StartsWith(fmt::format("text: line {}: 2 columns, not 26", 5 + rows)));

  SweepResult sweep = enumerated();
  const SweepJournal twice = read_sweep_journal(rewritten("d", text + text.substr(first_row)), kInputs);
  CHECK_THROWS_WITH(restore_journal_plans(sweep, twice, "d"), Contains(fmt::format("d: line {}: plan '", 5 + rows)) &&
                                                                  Contains("' was recorded before, on line 5"));
  std::string other_plan = text;
  other_plan.replace(first_row + 1, 3, "tp9");  // the label's
  sweep = enumerated();
  CHECK_THROWS_WITH(restore_journal_plans(sweep, read_sweep_journal(rewritten("e", other_plan), kInputs), "e"),
                    Contains("e: line 5: plan 'tp9 ") && Contains("' is not one this sweep simulates"));
  std::string edited = text;
  const std::size_t tp = text.find("\",", first_row) + 2;  // the tp column, after the label
  edited[tp] = edited[tp] == '1' ? '2' : '1';
  sweep = enumerated();
  CHECK_THROWS_WITH(restore_journal_plans(sweep, read_sweep_journal(rewritten("f", edited), kInputs), "f"),
                    Contains("f: line 5: plan '") && Contains("' does not read back as recorded"));
}

TEST_CASE("a row cut short by a crash is dropped, and the journal goes on after the last whole row",
          "[sweep][journal]") {
  const TempDir dir;
  const auto file = dir.file("p.csv.partial");
  const SweepResult sweep = interrupted_sweep(file, 2);
  const std::string whole = read_file(file);
  append(file, "\"tp2 cp1 pp1 dp4");  // no line break: the write never ended
  const SweepJournal journal = read_sweep_journal(file, kInputs);
  CHECK(journal.whole_rows_size == whole.size());
  const auto simulated =
      std::find_if(sweep.plans.begin(), sweep.plans.end(), [](const PlanOutcome& plan) { return plan.simulated(); });
  REQUIRE(simulated != sweep.plans.end());
  SweepJournalWriter(file, journal).add(*simulated);
  CHECK(read_file(file) == whole + sweep_journal_row(*simulated) + '\n');
}

TEST_CASE("CSV lines split at commas outside quotes", "[csv]") {
  CHECK(split_csv_line("a,,b") == std::vector<std::string>{"a", "", "b"});
  CHECK(split_csv_line("") == std::vector<std::string>{""});
  CHECK(split_csv_line("\"x, \"\"y\"\"\",z,") == std::vector<std::string>{"x, \"y\"", "z", ""});
  CHECK(split_csv_line(csv_quoted("a\"b,c")) == std::vector<std::string>{"a\"b,c"});
  CHECK_THROWS_WITH(split_csv_line("a,\"b"), Contains("the quote at column 3 is never closed"));
  CHECK_THROWS_WITH(split_csv_line("\"b\"c"), Contains("unexpected text after the quoted field at column 4"));
}

}  // namespace
}  // namespace weft
