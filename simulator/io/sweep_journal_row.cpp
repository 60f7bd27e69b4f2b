#include "simulator/io/sweep_journal_row.hpp"

#include <algorithm>
#include <charconv>

#include <fmt/format.h>

#include "simulator/core/input_error.hpp"
#include "simulator/core/split_text.hpp"
#include "simulator/io/csv.hpp"
#include "simulator/io/sweep_report_format.hpp"

namespace weft {
namespace {

template <class Number>
Number parse_number(std::string_view column, std::string_view text) {
  Number value{};
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || error != std::errc() || end != text.data() + text.size()) {
    throw InputError(fmt::format("column {}: '{}' is not a number", column, text));
  }
  return value;
}

std::string stages_cell(const PlanOutcome& plan) {
  std::string cell;
  for (const StageReport& stage : plan.report->stages) {
    if (!cell.empty()) cell += ';';
    cell += fmt::format("{} {} {}", stage.peak_memory, csv_number(stage.compute_s), csv_number(stage.bubble_s));
    for (double seconds : stage.exposed_comm_s) cell += ' ' + csv_number(seconds);
  }
  return cell;
}

std::vector<StageReport> parse_stages(std::string_view cell) {
  std::vector<StageReport> stages;
  for (std::string_view text : split_text(cell, ';')) {
    const std::vector<std::string_view> numbers = split_text(text, ' ');
    if (numbers.size() != 3 + kCommGroupKindCount) {
      throw InputError(fmt::format("column stages: stage {} has {} numbers, not {}", stages.size(), numbers.size(),
                                   3 + kCommGroupKindCount));
    }
    StageReport stage;
    stage.stage = static_cast<int>(stages.size());
    stage.peak_memory = parse_number<Bytes>("stages", numbers[0]);
    stage.compute_s = parse_number<double>("stages", numbers[1]);
    stage.bubble_s = parse_number<double>("stages", numbers[2]);
    for (std::size_t k = 0; k < kCommGroupKindCount; ++k) {
      stage.exposed_comm_s[k] = parse_number<double>("stages", numbers[3 + k]);
    }
    stages.push_back(std::move(stage));
  }
  return stages;
}

}  // namespace

std::string sweep_journal_columns() { return "label," + std::string(kSweepCsvPlanColumns) + ",stages"; }

std::string sweep_journal_row(const PlanOutcome& plan) {
  return csv_quoted(plan.label) + ',' + sweep_csv_cells(plan) + ',' + csv_quoted(stages_cell(plan));
}

PlanOutcome parse_sweep_journal_row(std::string_view row) {
  static const std::string names = sweep_journal_columns();
  static const std::vector<std::string_view> columns = split_text(names, ',');
  const std::vector<std::string> cells = split_csv_line(row);
  if (cells.size() != columns.size()) {
    throw InputError(fmt::format("{} columns, not {} ({})", cells.size(), columns.size(), names));
  }
  auto cell = [&](std::string_view column) -> const std::string& {
    return cells[static_cast<std::size_t>(std::find(columns.begin(), columns.end(), column) - columns.begin())];
  };
  PlanOutcome plan;
  plan.label = cell("label");
  const auto status = kPlanStatusNames.parse(cell("status"));
  if (!status || (*status != PlanStatus::ok && *status != PlanStatus::oom)) {
    throw InputError("column status: '" + cell("status") + "' is not ok or oom (the outcomes of a simulated plan)");
  }
  plan.status = *status;
  plan.reason = cell("reason");
  TrainingReport& report = plan.report.emplace();
  report.iteration_time_s = parse_number<double>("iteration_time_s", cell("iteration_time_s"));
  report.mfu = parse_number<double>("mfu", cell("mfu"));
  report.tokens_per_s = parse_number<double>("tokens_per_s", cell("tokens_per_s"));
  report.tflops_per_gpu = parse_number<double>("tflops_per_gpu", cell("tflops_per_gpu"));
  report.stages = parse_stages(cell("stages"));
  for (const StageReport& stage : report.stages) plan.stage_memory.push_back(stage.peak_memory);
  return plan;
}

}  // namespace weft
