#include "tools/weft/incremental_sweep.hpp"

#include <filesystem>

#include <fmt/format.h>

#include "tools/weft/command_support.hpp"

namespace weft::cli {

void add_incremental_flags(CLI::App& command, IncrementalFlags& flags) {
  command.add_flag("--incremental", flags.incremental,
                   "Append each plan to FILE.partial (FILE of --csv) as soon as it is simulated, so that a sweep "
                   "interrupted (Ctrl-C, SIGTERM, a crash) can be finished with --resume; FILE.partial is removed "
                   "once every output is written");
  command.add_flag("--resume", flags.resume,
                   "Finish the interrupted incremental sweep whose plans are in FILE.partial (FILE of --csv): take "
                   "them as recorded, simulate the others and append them too; the outputs are those of a sweep "
                   "never interrupted. The scenario, --gpus, --grid and --calibration must be those it started with");
}

IncrementalSweep::IncrementalSweep(const IncrementalFlags& flags, const std::string& csv_file) : resume_(flags.resume) {
  if (!flags.incremental && !flags.resume) return;
  const std::string flag = flags.resume ? "--resume" : "--incremental";
  if (csv_file.empty()) {
    throw InputError(flag + ": needs --csv FILE (the plans are recorded in FILE.partial as they are simulated)");
  }
  file_ = csv_file + ".partial";
  const bool exists = std::filesystem::exists(file_);
  if (flags.resume && !exists) {
    throw InputError("--resume: " + file_ +
                     " does not exist: there is no interrupted sweep to finish (run with --incremental, without "
                     "--resume, to start one)");
  }
  if (!flags.resume && exists) {
    throw InputError("--incremental: " + file_ +
                     " exists, the plans of an interrupted sweep: finish it with --resume, or delete it to start "
                     "afresh");
  }
}

void IncrementalSweep::open(SweepResult& sweep, const SweepJournalInputs& inputs) {
  if (!enabled()) return;
  if (!resume_) {
    writer_ = with_context("--incremental", [&] { return std::make_unique<SweepJournalWriter>(file_, inputs); });
    return;
  }
  with_context("--resume", [&] {
    const SweepJournal journal = read_sweep_journal(file_, inputs);
    restore_journal_plans(sweep, journal, file_);
    writer_ = std::make_unique<SweepJournalWriter>(file_, journal);
  });
}

void IncrementalSweep::add(const PlanOutcome& plan) {
  if (writer_) writer_->add(plan);
}

void IncrementalSweep::finish() {
  if (!writer_) return;
  writer_.reset();
  std::filesystem::remove(file_);
}

std::string IncrementalSweep::resume_hint(std::int64_t done) const {
  if (!enabled()) return "with --csv FILE --incremental, an interrupted sweep can be finished with --resume";
  return fmt::format("the {} plans done are in {}: rerun with --resume to finish", done, file_);
}

}  // namespace weft::cli
