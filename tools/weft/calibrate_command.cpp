#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "calibration/calibrate.hpp"
#include "calibration/profile_io.hpp"
#include "simulator/core/format_units.hpp"
#include "simulator/io/text_table.hpp"
#include "tools/weft/command_support.hpp"
#include "tools/weft/commands.hpp"

namespace weft::cli {
namespace {

struct CalibrateFlags {
  std::vector<std::string> measurements;
  std::string output;
};

std::string render_holdout(const std::vector<HoldoutErrors>& groups) {
  TextTable table;
  table.add_column("held out", TextTable::Align::left);
  table.add_column("shapes", TextTable::Align::right);
  table.add_column("default mean", TextTable::Align::right);
  table.add_column("default max", TextTable::Align::right);
  table.add_column("fitted mean", TextTable::Align::right);
  table.add_column("fitted max", TextTable::Align::right);
  for (const HoldoutErrors& g : groups) {
    table.add_row({g.group, std::to_string(g.count), format_percent(g.default_mean_abs),
                   format_percent(g.default_max_abs), format_percent(g.fitted_mean_abs),
                   format_percent(g.fitted_max_abs)});
  }
  return table.render("  ");
}

void run_calibrate(const CalibrateFlags& flags) {
  check_output_paths({{"-o", &flags.output}}, flags.measurements);
  std::vector<MeasurementFile> files;
  for (const std::string& file : flags.measurements) {
    const JsonDocument document = JsonDocument::parse_file(file);
    files.push_back({file, with_context(file, [&] { return read_measurements(document.root()); })});
  }
  const Calibration calibration = calibrate(files);
  const CalibratedCostModel& model = *calibration.model;
  fmt::print("weft calibrate: {} measurements of {} ({} backend)\n", calibration.measurements.measurements.size(),
             model.device(), calibration.measurements.backend);
  std::size_t gemm_points = 0;
  for (const auto& [dtype, gemm] : model.gemm()) gemm_points += gemm.points.size();
  fmt::print(
      "Fitted: {} GEMM tables ({} shapes off the grid), {} attention tables, {} memory-bound tables, {} memory-bound "
      "kernel tables, {} communication fits\n",
      model.gemm().size(), gemm_points, model.attention().size(), model.memory_bound().size(),
      model.memory_kernels().size(), model.communication().size());
  if (calibration.holdout.empty()) {
    fmt::print("No held-out measurements to judge the fit by.\n");
  } else {
    fmt::print(
        "Error on held-out measurements, |predicted - measured| / measured (default: the roofline and "
        "collective model of the device's best measured rates):\n{}",
        render_holdout(calibration.holdout));
  }
  write_output(
      "-o", flags.output, [&](std::ostream& out) { out << profile_json(calibration, utc_timestamp()).dump(1) << '\n'; },
      "(use it with --calibration)");
}

}  // namespace

void add_calibrate_command(CLI::App& app) {
  auto flags = std::make_shared<CalibrateFlags>();
  CLI::App* command = app.add_subcommand(
      "calibrate",
      "Fit a calibration profile to measurement files of one device (weft bench output): efficiency tables over "
      "shapes for GEMMs (per operand layout), attention (per kernel family) and memory-bound ops (per kernel), "
      "latency and bandwidth per collective and group size; "
      "report the error of the default and of the fitted model on the held-out measurements (docs/calibration.md).");
  command->add_option("MEASUREMENTS", flags->measurements, "Measurement files (weft bench -o)")->required();
  command->add_option("-o,--output", flags->output, "Profile file to write")->required()->type_name("PROFILE");
  command->callback([flags] { run_calibrate(*flags); });
}

}  // namespace weft::cli
