#include "simulator/io/sweep_journal.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <limits>
#include <map>
#include <sstream>

#include <fmt/format.h>

#include "simulator/core/input_error.hpp"
#include "simulator/io/sweep_journal_row.hpp"

namespace weft {
namespace {

constexpr std::string_view kFirstLine =
    "# weft sweep journal: the plans simulated so far, for weft sweep --resume (docs/sweep.md)";

std::string header(const SweepJournalInputs& inputs) {
  std::string text = std::string(kFirstLine) + '\n';
  for (const auto& [name, value] : inputs) text += "# " + name + ' ' + value + '\n';
  return text + sweep_journal_columns() + '\n';
}

[[noreturn]] void cannot_write(const std::filesystem::path& file) {
  throw InputError("cannot write '" + file.string() + "': " + std::strerror(errno));
}

std::string read_whole_file(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) throw InputError("cannot read '" + file.string() + "': " + std::strerror(errno));
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// The header line `line` (from 1) should be `expected`; says which input differs when not.
void check_header_line(std::string_view text, std::size_t line, const std::string& expected,
                       const SweepJournalInputs& inputs) {
  if (text == expected) return;
  if (line == 1) throw InputError("not a weft sweep journal");
  const std::size_t input = line - 2;
  if (input >= inputs.size()) {
    throw InputError("expected the columns " + expected);
  }
  const auto& [name, value] = inputs[input];
  const std::string prefix = "# " + name + ' ';
  const std::string recorded = text.starts_with(prefix) ? std::string(text.substr(prefix.size())) : std::string(text);
  throw InputError(fmt::format(
      "the journal is for {} '{}', this sweep for {} '{}': it is another sweep's journal (finish that sweep "
      "with --resume, or delete the journal to start afresh)",
      name, recorded, name, value));
}

}  // namespace

std::string content_fingerprint(std::string_view bytes) {
  std::uint64_t hash = 0xcbf29ce484222325ULL;
  for (char c : bytes) {
    hash ^= static_cast<unsigned char>(c);
    hash *= 0x100000001b3ULL;
  }
  return fmt::format("{:016x}", hash);
}

SweepJournal read_sweep_journal(const std::filesystem::path& file, const SweepJournalInputs& inputs) {
  return parse_sweep_journal(read_whole_file(file), file.string(), inputs);
}

SweepJournal parse_sweep_journal(std::string_view text, const std::string& name, const SweepJournalInputs& inputs) {
  const std::string expected = header(inputs);
  const std::size_t header_lines = inputs.size() + 2;
  SweepJournal journal;
  std::size_t line = 0;
  std::size_t expected_at = 0;
  for (std::size_t at = 0; at < text.size();) {
    const std::size_t end = text.find('\n', at);
    ++line;
    if (end == std::string::npos) break;  // a row cut short
    const std::string_view content(text.data() + at, end - at);
    try {
      if (line <= header_lines) {
        const std::size_t expected_end = expected.find('\n', expected_at);
        check_header_line(content, line, expected.substr(expected_at, expected_end - expected_at), inputs);
        expected_at = expected_end + 1;
      } else {
        journal.rows.push_back({line, std::string(content), parse_sweep_journal_row(content)});
      }
    } catch (const InputError& error) {
      throw InputError(fmt::format("{}: line {}: {}", name, line, error.what()));
    }
    at = end + 1;
    journal.whole_rows_size = at;
  }
  if (journal.whole_rows_size < expected.size()) {
    throw InputError(name + ": its header is incomplete (delete it to start afresh)");
  }
  return journal;
}

void restore_journal_plans(SweepResult& sweep, const SweepJournal& journal, const std::filesystem::path& file) {
  std::map<std::string_view, PlanOutcome*> plans;
  for (PlanOutcome& plan : sweep.plans) plans.emplace(plan.label, &plan);
  std::map<std::string_view, std::size_t> line_of;
  for (const SweepJournalRow& row : journal.rows) {
    auto fail = [&](const std::string& what) {
      throw InputError(fmt::format("{}: line {}: plan '{}' {}", file.string(), row.line, row.plan.label, what));
    };
    if (const auto [first, added] = line_of.emplace(row.plan.label, row.line); !added) {
      fail(fmt::format("was recorded before, on line {}", first->second));
    }
    const auto it = plans.find(row.plan.label);
    // A plan that waits: it passed the memory estimate and has no outcome yet.
    if (it == plans.end() || it->second->status != PlanStatus::ok || it->second->simulated()) {
      fail("is not one this sweep simulates");
    }
    PlanOutcome& plan = *it->second;
    // (a saturated sum says only that the grid is huge, and stays so)
    if (sweep.estimated_graph_ops < std::numeric_limits<std::int64_t>::max())
      sweep.estimated_graph_ops -= plan.graph_ops;
    plan.status = row.plan.status;
    plan.reason = row.plan.reason;
    plan.report = row.plan.report;
    plan.stage_memory = row.plan.stage_memory;
    if (sweep_journal_row(plan) != row.text) {
      fail("does not read back as recorded: the row was changed since it was written");
    }
  }
}

SweepJournalWriter::SweepJournalWriter(const std::filesystem::path& file, const SweepJournalInputs& inputs)
    : file_(file) {
  fd_ = ::open(file.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_APPEND | O_CLOEXEC, 0666);
  if (fd_ < 0) cannot_write(file);
  write(header(inputs));
}

SweepJournalWriter::SweepJournalWriter(const std::filesystem::path& file, const SweepJournal& journal) : file_(file) {
  std::error_code error;
  std::filesystem::resize_file(file, journal.whole_rows_size, error);
  if (error) throw InputError("cannot write '" + file.string() + "': " + error.message());
  fd_ = ::open(file.c_str(), O_WRONLY | O_APPEND | O_CLOEXEC);
  if (fd_ < 0) cannot_write(file);
}

SweepJournalWriter::~SweepJournalWriter() { ::close(fd_); }

void SweepJournalWriter::add(const PlanOutcome& plan) {
  const std::string row = sweep_journal_row(plan) + '\n';
  const std::lock_guard lock(mutex_);
  write(row);
}

void SweepJournalWriter::write(std::string_view text) {
  while (!text.empty()) {
    const ssize_t written = ::write(fd_, text.data(), text.size());
    if (written < 0 && errno == EINTR) continue;
    if (written < 0) cannot_write(file_);
    text.remove_prefix(static_cast<std::size_t>(written));
  }
}

}  // namespace weft
