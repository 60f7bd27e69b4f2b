#include "simulator/io/entrain_report.hpp"

#include <fmt/format.h>

#include "simulator/core/format_units.hpp"
#include "simulator/io/text_table.hpp"

namespace weft {
namespace {

using entrain::ComponentConfig;
using entrain::EntrainReport;
using entrain::EntrainRun;

// "10:6": GPUs per component, encoder first.
std::string allocation_text(const std::vector<int>& units, int tp) {
  std::string out;
  for (const int u : units) out += (out.empty() ? "" : ":") + std::to_string(u * tp);
  return out;
}

std::string allocations_text(const std::vector<std::vector<int>>& seen, int tp) {
  std::string out;
  for (const std::vector<int>& units : seen) out += (out.empty() ? "" : ", ") + allocation_text(units, tp);
  return out;
}

std::string layers_text(const std::vector<int>& layers) {
  std::string out;
  for (const int l : layers) out += (out.empty() ? "" : ",") + std::to_string(l);
  return out;
}

std::string milliseconds(double seconds) { return seconds < 0.0 ? "n/a" : fmt::format("{:.1f} ms", seconds * 1e3); }

nlohmann::json config_json(const ComponentConfig& config) {
  return {{"dp", config.dp},
          {"allocation", config.allocation},
          {"microbatches", config.microbatches},
          {"encoder_stage_layers", config.encoder.layers},
          {"llm_stage_layers", config.llm.layers},
          {"encoder_stage_s", config.encoder.stage_cost},
          {"llm_stage_s", config.llm.stage_cost},
          {"iteration_s", config.iteration_s},
          {"samples_per_s", config.samples_per_s},
          {"largest_memory_bytes", config.largest_memory},
          {"fits", config.fits}};
}

}  // namespace

std::string render_entrain_report(const std::string& subject, const EntrainReport& report) {
  std::string out = fmt::format(
      "Entrain on {}: {} GPUs, TP {}, {} replicas, global batch {} samples, micro-batch {}\n"
      "Cost model: each layer fitted as a x^2 + b x + c over 64 to 16,384 tokens; worst error at the profiled "
      "sizes {:.1f}%; each sample of the b_min batch against weft's costs of it alone: mean error {:.1f}%, worst "
      "{:.1f}%\n\n",
      subject, report.gpus, report.tp, report.dp, report.global_batch, report.micro_batch, report.fit_error * 100.0,
      report.estimate_error * 100.0, report.worst_estimate_error * 100.0);

  out += fmt::format("Minimum stable profiling batch (Algorithm 2: {} validation batches per size)\n",
                     report.profiling.trials);
  TextTable rounds;
  rounds.add_column("batch", TextTable::Align::right);
  rounds.add_column("batches drawn", TextTable::Align::right);
  rounds.add_column("encoder:LLM GPUs seen", TextTable::Align::left);
  rounds.add_column("stable", TextTable::Align::left);
  for (const entrain::ProfilingRound& round : report.profiling.rounds) {
    rounds.add_row({std::to_string(round.batch), std::to_string(round.trials + 1),
                    allocations_text(round.allocations, report.tp), round.stable ? "yes" : "no"});
  }
  out += rounds.render("  ");
  out += fmt::format("  b_min = {} samples; encoder:LLM work {:.2f}:1 on a batch of b_min\n", report.profiling.batch,
                     report.proportions[0] / report.proportions[1]);
  if (report.below_b_min) {
    out += fmt::format(
        "  The iteration's {} samples are fewer than b_min: its allocation may differ from batch to batch "
        "(papers/002 §4.3 asks for a global batch of b_min or more)\n",
        report.global_batch);
  }
  out += "\n";

  out += fmt::format("Allocations over {} batches per size (the analysis of Table 4.2)\n", report.profiling.trials);
  TextTable trials;
  trials.add_column("batch", TextTable::Align::right);
  trials.add_column("encoder:LLM GPUs seen", TextTable::Align::left);
  for (const auto& [size, seen] : report.trials)
    trials.add_row({std::to_string(size), allocations_text(seen, report.tp)});
  out += trials.render("  ") + "\n";

  out += "Layouts (Algorithm 3 from b_min's profile; Eq. 4.1 per component, Eq. 4.2 for the iteration)\n";
  TextTable layouts;
  for (const char* header :
       {"dp", "K", "encoder stages' layers", "LLM stages' layers", "Eq. 4.2", "samples/s", "fullest GPU"})
    layouts.add_column(header, TextTable::Align::right);
  for (const ComponentConfig& config : report.candidates) {
    layouts.add_row({std::to_string(config.dp), std::to_string(config.microbatches), layers_text(config.encoder.layers),
                     layers_text(config.llm.layers), format_seconds(config.iteration_s),
                     fmt::format("{:.1f}", config.samples_per_s),
                     format_bytes(config.largest_memory) + (config.fits ? "" : " (does not fit)")});
  }
  out += layouts.render("  ");
  const ComponentConfig& baseline = report.one_microbatch;
  if (report.best.dp > 0) {
    out +=
        fmt::format("  Algorithm 3's choice, the fastest that fits: dp {}; the runs below keep the scenario's dp {}\n",
                    report.best.dp, report.dp);
  } else {
    out += "  No layout fits in the GPU's memory\n";
  }
  out += fmt::format("  From one microbatch's profile at dp {}: encoder stages {}, LLM stages {}, fullest GPU {}{}\n\n",
                     report.dp, layers_text(baseline.encoder.layers), layers_text(baseline.llm.layers),
                     format_bytes(baseline.largest_memory), baseline.fits ? "" : " (does not fit: no run)");

  out += fmt::format(
      "One global batch, {} replicas, on the stage model (the slowest replica's pipeline; speed-up against the first "
      "row)\n",
      report.dp);
  TextTable runs;
  runs.add_column("run", TextTable::Align::left);
  for (const char* header : {"iteration", "samples/s", "speed-up", "encoder fwd std", "LLM fwd std", "peak activations",
                             "fullest GPU", "microbatches", "deferred"})
    runs.add_column(header, TextTable::Align::right);
  const double base = report.runs.empty() ? 0.0 : report.runs.front().samples_per_s;
  for (const EntrainRun& run : report.runs) {
    runs.add_row({run.name, format_duration(run.iteration), fmt::format("{:.1f}", run.samples_per_s),
                  fmt::format("{:.2f}x", run.samples_per_s / base), milliseconds(run.encoder_forward_std_s),
                  milliseconds(run.llm_forward_std_s), format_bytes(run.peak_activations),
                  format_bytes(run.largest_memory) + (run.fits ? "" : " (over)"), std::to_string(run.microbatches),
                  std::to_string(run.deferred)});
  }
  out += runs.render("  ");
  if (!report.dip_refused.empty()) out += "  weft plan could not plan this batch: " + report.dip_refused + "\n";

  out += fmt::format("\nEntrain under each split of a replica's GPUs (Fig. 4.15; * Algorithm 3's)\n");
  TextTable splits;
  for (const char* header : {"encoder:LLM GPUs", "encoder stages' layers", "LLM stages' layers", "Eq. 4.2",
                             "stage model", "samples/s", "speed vs *", "fullest GPU"})
    splits.add_column(header, TextTable::Align::right);
  const entrain::AllocationRun* chosen = nullptr;
  for (const entrain::AllocationRun& run : report.sensitivity) {
    if (run.layout.allocation == report.entrain.allocation) chosen = &run;
  }
  for (const entrain::AllocationRun& run : report.sensitivity) {
    const double samples_per_s =
        static_cast<double>(report.global_batch) / (static_cast<double>(run.iteration) / kNsPerSecond);
    splits.add_row(
        {allocation_text(run.layout.allocation, report.tp) + (&run == chosen ? " *" : ""),
         layers_text(run.layout.encoder.layers), layers_text(run.layout.llm.layers),
         format_seconds(run.layout.iteration_s), format_duration(run.iteration), fmt::format("{:.1f}", samples_per_s),
         chosen ? fmt::format("{:.2f}x", static_cast<double>(chosen->iteration) / static_cast<double>(run.iteration))
                : "",
         format_bytes(run.largest_memory) + (run.fits ? "" : " (over)")});
  }
  out += splits.render("  ");
  return out;
}

nlohmann::json entrain_json(const std::string& scenario, const EntrainReport& report) {
  nlohmann::json rounds = nlohmann::json::array();
  for (const entrain::ProfilingRound& round : report.profiling.rounds) {
    rounds.push_back({{"batch", round.batch},
                      {"validation_batches", round.trials},
                      {"allocations", round.allocations},
                      {"stable", round.stable}});
  }
  nlohmann::json trials = nlohmann::json::array();
  for (const auto& [size, seen] : report.trials) trials.push_back({{"batch", size}, {"allocations", seen}});
  nlohmann::json candidates = nlohmann::json::array();
  for (const ComponentConfig& config : report.candidates) candidates.push_back(config_json(config));
  nlohmann::json sensitivity = nlohmann::json::array();
  for (const entrain::AllocationRun& run : report.sensitivity) {
    nlohmann::json row = config_json(run.layout);
    row["stage_model_iteration_s"] = static_cast<double>(run.iteration) / kNsPerSecond;
    row["run_largest_memory_bytes"] = run.largest_memory;
    row["run_fits"] = run.fits;
    sensitivity.push_back(std::move(row));
  }
  nlohmann::json runs = nlohmann::json::array();
  for (const EntrainRun& run : report.runs) {
    runs.push_back({{"name", run.name},
                    {"iteration_s", static_cast<double>(run.iteration) / kNsPerSecond},
                    {"samples_per_s", run.samples_per_s},
                    {"encoder_forward_std_s", run.encoder_forward_std_s},
                    {"llm_forward_std_s", run.llm_forward_std_s},
                    {"peak_activation_bytes", run.peak_activations},
                    {"largest_memory_bytes", run.largest_memory},
                    {"fits", run.fits},
                    {"microbatches", run.microbatches},
                    {"deferred_samples", run.deferred}});
  }
  return {{"scenario", scenario},
          {"gpus", report.gpus},
          {"tp", report.tp},
          {"dp", report.dp},
          {"global_batch", report.global_batch},
          {"micro_batch", report.micro_batch},
          {"cost_model_worst_error", report.fit_error},
          {"sample_estimate_mean_error", report.estimate_error},
          {"sample_estimate_worst_error", report.worst_estimate_error},
          {"allocation_units", "stage groups of tp GPUs, encoder first"},
          {"profiling",
           {{"b_min", report.profiling.batch}, {"validation_batches", report.profiling.trials}, {"rounds", rounds}}},
          {"trials", trials},
          {"proportions", report.proportions},
          {"layouts", candidates},
          {"best_layout", config_json(report.best)},
          {"below_b_min", report.below_b_min},
          {"entrain_layout", config_json(report.entrain)},
          {"one_microbatch_layout", config_json(report.one_microbatch)},
          {"runs", runs},
          {"dip_refused", report.dip_refused},
          {"allocations", sensitivity}};
}

}  // namespace weft
