#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <tbb/parallel_for.h>

#include "calibration/published_collectives.hpp"
#include "calibration/published_suite.hpp"
#include "simulator/core/format_units.hpp"
#include "simulator/core/scenario_library.hpp"
#include "simulator/io/text_table.hpp"
#include "tools/weft/command_support.hpp"
#include "tools/weft/commands.hpp"

namespace weft::cli {
namespace {

struct SuiteFlags {
  std::vector<std::string> paths;
  std::string json_file;
};

// The case files (*.json) and collective measurement files (*.csv): each path one file or a folder
// of them (sorted by name).
struct SuiteFiles {
  std::vector<std::filesystem::path> cases;
  std::vector<std::filesystem::path> collectives;

  void add(const std::filesystem::path& file) { (file.extension() == ".csv" ? collectives : cases).push_back(file); }
};

SuiteFiles suite_files(const std::vector<std::string>& paths) {
  SuiteFiles files;
  for (const std::string& path : paths) {
    if (!std::filesystem::is_directory(path)) {
      files.add(path);
      continue;
    }
    std::vector<std::filesystem::path> folder;
    for (const auto& entry : std::filesystem::directory_iterator(path)) {
      const auto extension = entry.path().extension();
      if (entry.is_regular_file() && (extension == ".json" || extension == ".csv")) folder.push_back(entry.path());
    }
    std::sort(folder.begin(), folder.end());
    if (folder.empty()) throw InputError(path + ": no case files (*.json) or nccl-tests files (*.csv) in this folder");
    for (const auto& file : folder) files.add(file);
  }
  return files;
}

std::string format_value(PublishedMetric metric, double value) {
  switch (metric) {
    case PublishedMetric::iteration_time_s:
      return fmt::format("{:.2f} s", value);
    case PublishedMetric::tokens_per_s:
      return fmt::format("{:.0f} tok/s", value);
    case PublishedMetric::tokens_per_s_per_gpu:
      return fmt::format("{:.0f} tok/s/GPU", value);
    case PublishedMetric::tflops_per_gpu:
      return fmt::format("{:.1f} TFLOP/s", value);
  }
  return {};
}

std::string render(const std::vector<PublishedResult>& results) {
  TextTable table;
  for (const char* header : {"case", "source", "GPUs", "GPU"}) table.add_column(header, TextTable::Align::left);
  table.add_column("published", TextTable::Align::right);
  table.add_column("weft", TextTable::Align::right);
  table.add_column("error", TextTable::Align::right);
  for (const PublishedResult& r : results) {
    if (r.memory_only) continue;
    table.add_row({r.id, r.source_group, std::to_string(r.gpus), r.gpu, format_value(r.metric, r.published),
                   format_value(r.metric, r.predicted) + (r.oom ? " (OOM)" : ""),
                   fmt::format("{:+.1f}%", 100.0 * r.error)});
  }
  return table.render("  ");
}

// Per source group: its cases' mean absolute and mean signed error.
std::string render_sources(const std::vector<PublishedResult>& results, const SuiteSummary& summary) {
  TextTable table;
  table.add_column("source", TextTable::Align::left);
  for (const char* header : {"runs", "mean |error|", "mean signed"}) table.add_column(header, TextTable::Align::right);
  for (const std::string& group : summary.source_groups) {
    std::vector<PublishedResult> of_group;
    std::copy_if(results.begin(), results.end(), std::back_inserter(of_group),
                 [&](const PublishedResult& r) { return r.source_group == group; });
    const SuiteSummary part = summarize(of_group);
    table.add_row({group, std::to_string(part.cases), fmt::format("{:.1f}%", 100.0 * part.mean_abs_error),
                   fmt::format("{:+.1f}%", 100.0 * part.mean_signed_error)});
  }
  return table.render("  ");
}

std::string render_memory(const std::vector<PublishedResult>& results) {
  TextTable table;
  table.add_column("case", TextTable::Align::left);
  for (const char* header : {"published", "weft", "error"}) table.add_column(header, TextTable::Align::right);
  for (const PublishedResult& r : results) {
    if (r.published_memory_gb <= 0.0) continue;
    table.add_row({r.id, fmt::format("{:.1f} GB", r.published_memory_gb),
                   fmt::format("{:.1f} GB", r.predicted_memory_gb),
                   fmt::format("{:+.1f}%", 100.0 * (r.predicted_memory_gb / r.published_memory_gb - 1.0))});
  }
  return table.render("  ");
}

// The runs that ran, which weft predicts out of memory: its peak against the GPU's memory.
std::string render_predicted_out_of_memory(const std::vector<PublishedResult>& results) {
  TextTable table;
  table.add_column("case", TextTable::Align::left);
  for (const char* header : {"weft's peak", "GPU memory", "over"}) table.add_column(header, TextTable::Align::right);
  for (const PublishedResult& r : results) {
    if (!r.oom) continue;
    table.add_row({r.id, fmt::format("{:.1f} GB", r.predicted_memory_gb),
                   fmt::format("{:.1f} GB", r.memory_capacity_gb),
                   fmt::format("{:+.1f}%", 100.0 * (r.predicted_memory_gb / r.memory_capacity_gb - 1.0))});
  }
  return table.render("  ");
}

// The runs their sources report out of memory, and whether weft finds them out of memory too.
std::string render_out_of_memory(const std::vector<PublishedResult>& runs) {
  TextTable table;
  for (const char* header : {"case", "source", "GPUs", "GPU"}) table.add_column(header, TextTable::Align::left);
  table.add_column("weft's peak", TextTable::Align::right);
  table.add_column("weft", TextTable::Align::left);
  for (const PublishedResult& r : runs) {
    table.add_row({r.id, r.source_group, std::to_string(r.gpus), r.gpu, fmt::format("{:.1f} GB", r.predicted_memory_gb),
                   r.oom ? "out of memory" : "fits"});
  }
  return table.render("  ");
}

nlohmann::json out_of_memory_json(const std::vector<PublishedResult>& runs) {
  nlohmann::json out = nlohmann::json::array();
  for (const PublishedResult& r : runs) {
    out.push_back({{"case", r.id},
                   {"source_group", r.source_group},
                   {"gpu", r.gpu},
                   {"gpus", r.gpus},
                   {"oom", r.oom},
                   {"predicted_memory_GB", r.predicted_memory_gb}});
  }
  return out;
}

nlohmann::json results_json(const std::vector<PublishedResult>& results, const SuiteSummary& summary) {
  nlohmann::json cases = nlohmann::json::array();
  nlohmann::json memory_only = nlohmann::json::array();
  for (const PublishedResult& r : results) {
    if (r.memory_only) {
      memory_only.push_back({{"case", r.id},
                             {"source_group", r.source_group},
                             {"gpu", r.gpu},
                             {"gpus", r.gpus},
                             {"oom", r.oom},
                             {"published_memory_GB", r.published_memory_gb},
                             {"predicted_memory_GB", r.predicted_memory_gb}});
      continue;
    }
    cases.push_back({{"case", r.id},
                     {"source_group", r.source_group},
                     {"gpu", r.gpu},
                     {"gpus", r.gpus},
                     {"metric", kPublishedMetricNames.name(r.metric)},
                     {"published", r.published},
                     {"predicted", r.predicted},
                     {"error", r.error},
                     {"oom", r.oom},
                     {"predicted_memory_GB", r.predicted_memory_gb}});
    if (r.published_memory_gb > 0.0) cases.back()["published_memory_GB"] = r.published_memory_gb;
  }
  return {{"cases", cases},
          {"memory_only_runs", memory_only},
          {"summary",
           {{"cases", summary.cases},
            {"memory_only_cases", summary.memory_only_cases},
            {"mean_abs_error", summary.mean_abs_error},
            {"mean_signed_error", summary.mean_signed_error},
            {"worst_abs_error", summary.worst_abs_error},
            {"worst_case", summary.worst_case},
            {"source_groups", summary.source_groups},
            {"memory_cases", summary.memory_cases},
            {"memory_mean_abs_error", summary.memory_mean_abs_error},
            {"memory_worst_abs_error", summary.memory_worst_abs_error},
            {"predicted_out_of_memory", summary.predicted_out_of_memory}}}};
}

std::vector<CollectiveRunResult> run_collectives(const std::vector<std::filesystem::path>& files) {
  std::vector<PublishedCollective> rows;
  for (const std::filesystem::path& file : files) {
    std::ifstream in(file);
    if (!in) throw InputError(file.string() + ": cannot open the file");
    const auto read = read_published_collectives(in, file.string());
    rows.insert(rows.end(), read.begin(), read.end());
  }
  return run_published_collectives(rows);
}

std::string render_collectives(const std::vector<CollectiveRunResult>& results) {
  TextTable table;
  for (const char* header : {"collective", "cluster"}) table.add_column(header, TextTable::Align::left);
  table.add_column("GPUs", TextTable::Align::right);
  table.add_column("NVLS", TextTable::Align::left);
  for (const char* header : {"sizes", "largest", "busbw", "weft", "error", "median |error|"}) {
    table.add_column(header, TextTable::Align::right);
  }
  table.add_column("source", TextTable::Align::left);
  for (const CollectiveRunResult& r : results) {
    // The source's repository (or page) and file name: enough to find the row in the CSV.
    const std::string source = r.source.substr(0, r.source.find(" @"));
    table.add_row({r.collective, r.cluster, fmt::format("{}x{}", r.nodes, r.gpus_per_node), r.nvls,
                   std::to_string(r.sizes), format_bytes(r.largest), fmt::format("{:.1f} GB/s", r.measured_busbw_gbps),
                   fmt::format("{:.1f} GB/s", r.predicted_busbw_gbps), fmt::format("{:+.1f}%", 100.0 * r.largest_error),
                   fmt::format("{:.1f}%", 100.0 * r.median_abs_error), source.substr(source.rfind('/') + 1)});
  }
  return table.render("  ");
}

nlohmann::json collectives_json(const std::vector<CollectiveRunResult>& results) {
  nlohmann::json runs = nlohmann::json::array();
  for (const CollectiveRunResult& r : results) {
    runs.push_back({{"collective", r.collective},
                    {"cluster", r.cluster},
                    {"nodes", r.nodes},
                    {"gpus_per_node", r.gpus_per_node},
                    {"nvls", r.nvls},
                    {"source", r.source},
                    {"sizes", r.sizes},
                    {"largest_bytes", r.largest},
                    {"measured_busbw_GBps", r.measured_busbw_gbps},
                    {"predicted_busbw_GBps", r.predicted_busbw_gbps},
                    {"largest_error", r.largest_error},
                    {"median_abs_error", r.median_abs_error}});
  }
  return runs;
}

void print_training_runs(const std::vector<PublishedResult>& results, const SuiteSummary& summary) {
  const std::string memory_only =
      summary.memory_only_cases > 0
          ? fmt::format(", and {} compared on their peak memory only", summary.memory_only_cases)
          : "";
  fmt::print("weft suite: {} published training runs from {} sources{}\n{}", summary.cases,
             summary.source_groups.size(), memory_only, render(results));
  fmt::print(
      "Mean |error| {:.1f}%, worst {:.1f}% ({}), mean signed error {:+.1f}% (error: weft's throughput over the "
      "published one, minus 1; positive: weft predicts a faster run)\n",
      100.0 * summary.mean_abs_error, 100.0 * summary.worst_abs_error, summary.worst_case,
      100.0 * summary.mean_signed_error);
  fmt::print("\nPer source:\n{}", render_sources(results, summary));
  if (summary.memory_cases > 0) {
    fmt::print("\nPeak memory per GPU, where the source gives it:\n{}", render_memory(results));
    fmt::print("Peak memory: mean |error| {:.1f}%, worst {:.1f}% over {} runs\n", 100.0 * summary.memory_mean_abs_error,
               100.0 * summary.memory_worst_abs_error, summary.memory_cases);
  }
  if (summary.predicted_out_of_memory > 0) {
    fmt::print("\nRuns that ran, which weft predicts out of memory:\n{}", render_predicted_out_of_memory(results));
  }
  fmt::print("Predicted out of memory: {} of {} runs that ran\n", summary.predicted_out_of_memory,
             summary.cases + summary.memory_only_cases);
}

void run_suite(const SuiteFlags& flags) {
  check_output_paths({{"--json", &flags.json_file}}, flags.paths);
  const std::vector<std::string> paths =
      flags.paths.empty() ? std::vector<std::string>{(ScenarioLibrary::root() / "validation").string()} : flags.paths;
  const SuiteFiles files = suite_files(paths);
  std::vector<PublishedCase> cases;
  for (const std::filesystem::path& file : files.cases) {
    const JsonDocument document = JsonDocument::parse_file(file);
    cases.push_back(
        with_context(file.string(), [&] { return read_published_case(document.root(), file.stem().string()); }));
  }
  const std::vector<CollectiveRunResult> collectives = run_collectives(files.collectives);
  std::vector<PublishedResult> all(cases.size());
  tbb::parallel_for(std::size_t{0}, cases.size(), [&](std::size_t i) { all[i] = run_published_case(cases[i]); });
  std::vector<PublishedResult> results;
  std::vector<PublishedResult> out_of_memory;
  for (PublishedResult& r : all) (r.published_oom ? out_of_memory : results).push_back(std::move(r));
  const SuiteSummary summary = summarize(results);
  if (!results.empty()) print_training_runs(results, summary);
  if (!out_of_memory.empty()) {
    const auto agreed = std::count_if(out_of_memory.begin(), out_of_memory.end(), [](const auto& r) { return r.oom; });
    fmt::print("{}Runs their sources report out of memory:\n{}weft finds {} of {} out of memory\n",
               results.empty() ? "" : "\n", render_out_of_memory(out_of_memory), agreed, out_of_memory.size());
  }
  if (!collectives.empty()) {
    fmt::print(
        "{}Collectives: published nccl-tests runs (error: weft's throughput over the measured one, minus 1, "
        "at the largest size, and the median over every size)\n{}",
        cases.empty() ? "" : "\n", render_collectives(collectives));
  }
  if (!flags.json_file.empty()) {
    nlohmann::json document = results_json(results, summary);
    document["out_of_memory_runs"] = out_of_memory_json(out_of_memory);
    document["collectives"] = collectives_json(collectives);
    write_output("--json", flags.json_file, [&](std::ostream& out) { out << document.dump(2) << '\n'; });
  }
}

}  // namespace

void add_suite_command(CLI::App& app) {
  auto flags = std::make_shared<SuiteFlags>();
  CLI::App* command = app.add_subcommand(
      "suite",
      "Simulate published end-to-end training runs (scenarios/validation/: each a scenario with the published "
      "iteration time, tokens/s or TFLOP/s per GPU and its source) and print weft's error on each, then the mean "
      "absolute, worst and mean signed error, weft's error on the peak memory where a source gives it (some runs "
      "are compared on it alone), and whether weft finds out of memory the runs their sources report "
      "out of memory; then cost the published nccl-tests runs (scenarios/validation/*.csv) by "
      "weft's collective model and print its error on each (docs/VALIDATION.md, docs/collectives.md).");
  command->add_option("CASES", flags->paths,
                      "Case files (*.json), nccl-tests files (*.csv) or folders of them (default: the bundled suite)");
  command->add_option("--json", flags->json_file, "Also write the results as JSON")->type_name("FILE");
  command->callback([flags] { run_suite(*flags); });
}

}  // namespace weft::cli
