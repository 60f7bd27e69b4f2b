#pragma once

#include <cstdint>
#include <filesystem>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "simulator/planner/sweep.hpp"

namespace weft {

// The journal of an incremental sweep (weft sweep --incremental, docs/sweep.md): a CSV file to
// which each plan is appended as soon as it is simulated, so that an interrupted sweep can be
// finished (--resume) without simulating again what it had done, and end with the same outputs as
// a sweep never interrupted. Its header names the inputs it was written for, a "# name value"
// line each, then its columns (sweep_journal_row.hpp); a row per plan follows, in the order the
// plans finished.

// The inputs a journal was written for, in order: name and value, each value on one line.
using SweepJournalInputs = std::vector<std::pair<std::string, std::string>>;

// 16 hex digits of a 64-bit FNV-1a hash of `bytes`: how a journal records a large input.
std::string content_fingerprint(std::string_view bytes);

struct SweepJournalRow {
  std::size_t line = 0;  // in the file, from 1
  std::string text;
  PlanOutcome plan;  // as parse_sweep_journal_row reads it
};

struct SweepJournal {
  std::vector<SweepJournalRow> rows;
  // Bytes up to the end of the last whole row: a last row without its line break, cut short
  // when the process died as it wrote it, is not among the rows and is cut off before appending.
  std::uintmax_t whole_rows_size = 0;
};

// Reads the journal `file`. Throws InputError naming the file and the line at fault when it is not
// a sweep journal, was written for other inputs than `inputs`, or holds a row that cannot be read.
SweepJournal read_sweep_journal(const std::filesystem::path& file, const SweepJournalInputs& inputs);
// The same, of a journal's text; `name` stands for its file in messages.
SweepJournal parse_sweep_journal(std::string_view text, const std::string& name, const SweepJournalInputs& inputs);

// Gives each plan of `sweep` that waits to be simulated the outcome its row in `journal` records.
// Throws InputError naming `file` and the line of a row that is not of a plan the sweep simulates,
// repeats one, or does not agree with its plan as the sweep builds it (edited by hand).
void restore_journal_plans(SweepResult& sweep, const SweepJournal& journal, const std::filesystem::path& file);

// Appends plans to a journal as they are simulated: one write per row, from any thread, so that
// a row is on disk (if not yet synced) as soon as `add` returns.
class SweepJournalWriter {
 public:
  // Starts the journal `file`, which must not exist, for `inputs`.
  SweepJournalWriter(const std::filesystem::path& file, const SweepJournalInputs& inputs);
  // Goes on with `journal`, read from `file`, after its last whole row.
  SweepJournalWriter(const std::filesystem::path& file, const SweepJournal& journal);
  ~SweepJournalWriter();
  SweepJournalWriter(const SweepJournalWriter&) = delete;
  SweepJournalWriter& operator=(const SweepJournalWriter&) = delete;

  void add(const PlanOutcome& plan);

 private:
  void write(std::string_view text);

  std::filesystem::path file_;
  int fd_ = -1;
  std::mutex mutex_;
};

}  // namespace weft
