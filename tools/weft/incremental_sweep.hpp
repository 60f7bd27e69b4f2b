#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include <CLI/CLI.hpp>

#include "simulator/io/sweep_journal.hpp"

namespace weft::cli {

// --incremental and --resume of weft sweep (docs/sweep.md).
struct IncrementalFlags {
  bool incremental = false;
  bool resume = false;
};

void add_incremental_flags(CLI::App& command, IncrementalFlags& flags);

// The journal an incremental sweep keeps, FILE.partial next to its --csv FILE; or none, without
// --incremental and --resume.
class IncrementalSweep {
 public:
  // Checks the flags, and that the journal is there to resume or not there to start, before any
  // work; throws InputError naming the flag otherwise.
  IncrementalSweep(const IncrementalFlags& flags, const std::string& csv_file);

  bool enabled() const { return !file_.empty(); }
  bool resuming() const { return enabled() && resume_; }
  const std::string& file() const { return file_; }

  // Starts the journal for `inputs`; with --resume, reads it instead, gives `sweep` the plans it
  // records and goes on appending to it.
  void open(SweepResult& sweep, const SweepJournalInputs& inputs);
  // Records a simulated plan; from any thread.
  void add(const PlanOutcome& plan);
  // Once every output is written: removes the journal.
  void finish();

  // How to go on after an interruption with `done` plans simulated.
  std::string resume_hint(std::int64_t done) const;

 private:
  bool resume_ = false;
  std::string file_;
  std::unique_ptr<SweepJournalWriter> writer_;
};

}  // namespace weft::cli
