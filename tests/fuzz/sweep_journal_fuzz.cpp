// Sweep journals (weft sweep --resume's FILE.partial), read and then restored into the sweep they
// would finish: a small grid of Llama 3 8B cut to 4 layers on 8 H100s, whose real journal (every
// plan simulated and recorded) is written once. The first byte picks what the rest is: 0, rows
// after the journal's real header (so that mutations reach the rows, not only the header); 1, a
// whole file; 2, edits of the real journal, each three bytes: where (two bytes, modulo its
// length) and the byte written there.
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "simulator/io/sweep_journal.hpp"
#include "simulator/planner/sweep.hpp"
#include "simulator/planner/sweep_grid.hpp"
#include "tests/fuzz/fuzz_input.hpp"

namespace {

const weft::SweepJournalInputs kInputs = {
    {"scenario", "fuzz"}, {"grid", "tp=1,2 pp=1,2 cp=1 vpp=1 mb=1,2 zero=1 recompute=none,full schedule=1f1b"}};

struct Journal {
  weft::SweepResult enumerated;  // the grid's plans, none simulated yet
  std::string header;            // the real journal's header
  std::string text;              // header and a row per simulated plan
};

std::string read_text(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

const Journal& journal() {
  static const Journal real = [] {
    const weft::JsonDocument document = weft::JsonDocument::parse_text(
        R"({"model": {"base": "llama3-8b", "layers": 4}, "cluster": {"base": "dgx-h100", "gpus": 8},
            "training": {"global_batch": 8, "seq_len": 1024}})",
        "sweep.json");
    const weft::TrainingScenario base = weft::load_sweep_scenario(document.root());
    weft::SweepGrid grid = weft::default_grid(base, 8);
    weft::apply_grid_spec(grid, kInputs[1].second);
    Journal out{weft::enumerate_sweep(base, grid, 8, weft::fuzz::kMaxOps), {}, {}};
    const std::filesystem::path file =
        std::filesystem::temp_directory_path() / ("weft-fuzz-journal-" + std::to_string(::getpid()));
    std::filesystem::remove(file);
    {
      weft::SweepJournalWriter writer(file, kInputs);
      out.header = read_text(file);
      weft::SweepResult simulated = out.enumerated;
      weft::SweepOptions options;
      options.on_simulated = [&](const weft::PlanOutcome& plan) { writer.add(plan); };
      weft::simulate_sweep(simulated, options);
    }
    out.text = read_text(file);
    std::filesystem::remove(file);
    return out;
  }();
  return real;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const Journal& real = journal();
  const std::string_view rest = weft::fuzz::text_of(data + 1, size - 1);
  std::string text;
  switch (data[0] % 3) {
    case 0:
      text = real.header + std::string(rest);
      break;
    case 1:
      text = rest;
      break;
    default:
      text = real.text;
      for (std::size_t at = 0; at + 3 <= rest.size(); at += 3) {
        const auto where = static_cast<std::size_t>(static_cast<unsigned char>(rest[at])) << 8 |
                           static_cast<unsigned char>(rest[at + 1]);
        text[where % text.size()] = rest[at + 2];
      }
  }
  try {
    const weft::SweepJournal read = weft::parse_sweep_journal(text, "fuzz.partial", kInputs);
    weft::SweepResult sweep = real.enumerated;
    weft::restore_journal_plans(sweep, read, "fuzz.partial");
  } catch (const weft::InputError&) {
  }
  return 0;
}
