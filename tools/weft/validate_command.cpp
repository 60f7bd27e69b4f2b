#include <algorithm>
#include <memory>
#include <numeric>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "calibration/rank_correlation.hpp"
#include "calibration/trace_comparison.hpp"
#include "simulator/io/atomic_file.hpp"
#include "simulator/io/text_table.hpp"
#include "tools/weft/command_support.hpp"
#include "tools/weft/commands.hpp"

namespace weft::cli {
namespace {

struct ValidateFlags {
  std::vector<std::string> traces;
  std::string json_file;
};

TraceSummary read_trace(const std::string& file) {
  const JsonDocument document = JsonDocument::parse_file(file);
  return with_context(file, [&] { return summarize_trace(document.root()); });
}

std::string render(const std::vector<ComparedValue>& values, const std::string& header) {
  TextTable table;
  table.add_column(header, TextTable::Align::left);
  table.add_column("simulated", TextTable::Align::right);
  table.add_column("measured", TextTable::Align::right);
  table.add_column("error", TextTable::Align::right);
  for (const ComparedValue& v : values) {
    table.add_row({v.what, fmt::format("{:.3f} ms", v.simulated_s * 1e3), fmt::format("{:.3f} ms", v.measured_s * 1e3),
                   v.measured_s > 0.0 ? fmt::format("{:+.1f}%", 100.0 * v.error()) : "-"});
  }
  return table.render("  ");
}

nlohmann::json values_json(const std::vector<ComparedValue>& values) {
  nlohmann::json out = nlohmann::json::array();
  for (const ComparedValue& v : values) {
    out.push_back(
        {{"name", v.what}, {"simulated_s", v.simulated_s}, {"measured_s", v.measured_s}, {"error", v.error()}});
  }
  return out;
}

void run_validate(const ValidateFlags& flags) {
  if (flags.traces.size() % 2 != 0) {
    throw InputError("expected pairs of traces, SIMULATED MEASURED, got " + std::to_string(flags.traces.size()) +
                     " files");
  }
  check_output_paths({{"--json", &flags.json_file}}, flags.traces);
  std::vector<TraceComparison> comparisons;
  for (std::size_t i = 0; i < flags.traces.size(); i += 2) {
    comparisons.push_back(compare_traces(read_trace(flags.traces[i]), read_trace(flags.traces[i + 1])));
  }
  nlohmann::json pairs = nlohmann::json::array();
  std::vector<double> simulated, measured;
  for (std::size_t p = 0; p < comparisons.size(); ++p) {
    const TraceComparison& c = comparisons[p];
    const std::string& sim_file = flags.traces[2 * p];
    const std::string& real_file = flags.traces[2 * p + 1];
    fmt::print("weft validate {} {}\n", sim_file, real_file);
    fmt::print("{}\n", render({c.iteration}, "iteration time"));
    fmt::print("{}\n", render(c.stages, "compute time per rank"));
    fmt::print("{}\n", render(c.classes, "op time per rank, by class"));
    if (c.measured_rank_spread > kDisturbedSpread) {
      fmt::print(
          "  Measured, ranks of one stage (the same work) differ by up to {:.1f}% in compute time: a device ran "
          "slower than its peers for a while; the simulation assumes identical devices.\n\n",
          100.0 * c.measured_rank_spread);
    }
    if (c.measured_stage_rate_spread > kDisturbedSpread) {
      fmt::print(
          "  Measured against simulated, the stages computed at rates {:.1f}% apart: a device ran slower than its "
          "peers for a while, or the model mispredicts one stage's ops more than another's.\n\n",
          100.0 * c.measured_stage_rate_spread);
    }
    simulated.push_back(c.iteration.simulated_s);
    measured.push_back(c.iteration.measured_s);
    pairs.push_back({{"simulated", sim_file},
                     {"measured", real_file},
                     {"iteration", values_json({c.iteration}).front()},
                     {"stages", values_json(c.stages)},
                     {"classes", values_json(c.classes)},
                     {"measured_rank_spread", c.measured_rank_spread},
                     {"measured_stage_rate_spread", c.measured_stage_rate_spread},
                     {"measured_disturbed", c.measured_disturbed()}});
  }
  nlohmann::json json = {{"pairs", pairs}};
  if (comparisons.size() >= 2) {
    std::vector<std::size_t> by_simulated(simulated.size()), by_measured(measured.size());
    std::iota(by_simulated.begin(), by_simulated.end(), 0);
    std::iota(by_measured.begin(), by_measured.end(), 0);
    std::stable_sort(by_simulated.begin(), by_simulated.end(),
                     [&](auto a, auto b) { return simulated[a] < simulated[b]; });
    std::stable_sort(by_measured.begin(), by_measured.end(), [&](auto a, auto b) { return measured[a] < measured[b]; });
    const double correlation = rank_correlation(simulated, measured);
    std::vector<std::pair<double, double>> measured_ranges;
    for (const TraceComparison& c : comparisons) measured_ranges.push_back(c.measured_range_s);
    const ResolvedOrder resolved = resolved_order(simulated, measured_ranges);
    const bool agrees = by_simulated == by_measured;
    double mean_error = 0.0;
    for (const TraceComparison& c : comparisons) mean_error += std::abs(c.iteration.error());
    mean_error /= static_cast<double>(comparisons.size());
    fmt::print(
        "Across {} plans: mean |iteration time error| {:.1f}%, rank correlation of simulated and measured "
        "iteration times (Spearman) {:.3f}; the fastest-to-slowest order {}\n",
        comparisons.size(), 100.0 * mean_error, correlation, agrees ? "agrees" : "differs");
    fmt::print(
        "Pairs of plans the measurement tells apart (their measured iterations do not overlap): {} of {}; "
        "the simulation orders {} of them alike\n",
        resolved.resolved, resolved.pairs, resolved.agreeing);
    json["plans"] = {{"mean_abs_iteration_error", mean_error},
                     {"rank_correlation", correlation},
                     {"order_agrees", agrees},
                     {"pairs", resolved.pairs},
                     {"resolved_pairs", resolved.resolved},
                     {"resolved_pairs_ordered_alike", resolved.agreeing}};
  }
  if (!flags.json_file.empty()) {
    write_output("--json", flags.json_file, [&](std::ostream& out) { out << json.dump(2) << '\n'; });
  }
}

}  // namespace

void add_validate_command(CLI::App& app) {
  auto flags = std::make_shared<ValidateFlags>();
  CLI::App* command = app.add_subcommand(
      "validate",
      "Compare simulated timelines with measured ones (weft simulate --trace, weft live --trace): iteration time, "
      "compute time per pipeline stage and op time per class, with their errors, and how far apart the measured ranks "
      "of a stage computed, and the stages relative to the simulation; for several plans, how well the simulation "
      "ranks them (docs/live.md).");
  command->add_option("TRACES", flags->traces, "SIMULATED MEASURED trace pairs, one pair per plan")->required();
  command->add_option("--json", flags->json_file, "Write the comparison as JSON to FILE")->type_name("FILE");
  command->callback([flags] { run_validate(*flags); });
}

}  // namespace weft::cli
