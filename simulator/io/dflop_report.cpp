#include "simulator/io/dflop_report.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "simulator/core/format_units.hpp"
#include "simulator/io/text_table.hpp"

namespace weft {
namespace {

using dflop::BucketMethod;
using dflop::ComponentProfile;
using dflop::DflopPlan;
using dflop::DflopReport;
using dflop::DflopRun;
using dflop::ModuleLayout;

// Each layout op by op on uniform samples, beside the stage model on the same samples.
std::string full_simulation_text(const std::vector<dflop::FullSimulation>& full) {
  if (full.empty()) return {};
  const SampleShape& sample = full.front().sample;
  std::string out = fmt::format(
      "\nEach layout op by op (weft simulate, each component on a mesh of its own) on uniform samples of {} images "
      "and {} tokens, as many as its buckets hold, against the stage model on the same samples:\n",
      sample.images, sample.seq_len);
  TextTable table;
  table.add_column("layout", TextTable::Align::left);
  for (const char* name : {"samples", "iteration", "samples/s", "stage model", "full vs stage model"})
    table.add_column(name, TextTable::Align::right);
  for (const dflop::FullSimulation& run : full) {
    if (!run.iteration_s) {
      table.add_row(
          {run.layout, std::to_string(run.samples), "not simulated", "", format_seconds(run.stage_model_s), ""});
      continue;
    }
    table.add_row({run.layout, std::to_string(run.samples),
                   format_seconds(*run.iteration_s) + (run.out_of_memory ? " (out of memory)" : ""),
                   fmt::format("{:.1f}", run.samples_per_s), format_seconds(run.stage_model_s),
                   fmt::format("{:+.1f}%", (*run.iteration_s / run.stage_model_s - 1.0) * 100.0)});
  }
  out += table.render("  ");
  for (const dflop::FullSimulation& run : full) {
    if (!run.refused.empty()) out += "  " + run.layout + " not simulated: " + run.refused + "\n";
  }
  return out;
}

std::string layout_text(const ModuleLayout& layout) {
  return fmt::format("TP {} PP {} DP {} ({} GPUs)", layout.tp, layout.pp, layout.dp, layout.gpus());
}

std::string plan_text(const DflopPlan& plan) {
  return fmt::format(
      "encoder {}, LLM {}, {} microbatches\n"
      "    expected {:.3f} s an iteration (E_dur {:.1f} ms, L_dur {:.1f} ms); {:.1f} images and {:.0f} tokens a "
      "microbatch; memory {} (encoder), {} (LLM)\n",
      layout_text(plan.encoder), layout_text(plan.llm), plan.microbatches, plan.expected_makespan_s,
      plan.encoder_stage_s * 1e3, plan.llm_stage_s * 1e3, plan.images_per_microbatch, plan.tokens_per_microbatch,
      format_bytes(plan.encoder_memory), format_bytes(plan.llm_memory));
}

std::string method_text(const dflop::BucketAssignment& schedule) {
  if (schedule.method == BucketMethod::ilp) return "ILP, optimal";
  return schedule.optimal ? "LPT, meets the bound" : "LPT (ILP unproven within its limits)";
}

// "1 s", "2000 nodes", "1 s and 2000 nodes".
std::string limits_text(const SearchLimits& limits) {
  std::string out;
  if (limits.seconds > 0.0) out = fmt::format("{:g} s", limits.seconds);
  if (limits.nodes > 0) out += fmt::format("{}{} nodes", out.empty() ? "" : " and ", limits.nodes);
  return out.empty() ? "no limit" : out;
}

// "120 at 1, 180 at 4, 190 at 64": TFLOP/s per GPU at the grid's first, middle and last points.
std::string rates_text(const dflop::PiecewiseLinear& rate, const char* unit) {
  if (rate.x().empty()) return "";
  std::string out;
  for (const std::size_t k : {std::size_t{0}, rate.x().size() / 2, rate.x().size() - 1}) {
    out += fmt::format("{}{:.0f} at {:.0f} {}", out.empty() ? "" : ", ", rate.y()[k] / 1e12, rate.x()[k], unit);
    if (rate.x().size() == 1) break;
  }
  return out;
}

nlohmann::json layout_json(const ModuleLayout& layout) {
  return {{"tp", layout.tp}, {"pp", layout.pp}, {"dp", layout.dp}};
}

nlohmann::json plan_json(const DflopPlan& plan) {
  return {{"encoder", layout_json(plan.encoder)},
          {"llm", layout_json(plan.llm)},
          {"microbatches", plan.microbatches},
          {"images_per_microbatch", plan.images_per_microbatch},
          {"tokens_per_microbatch", plan.tokens_per_microbatch},
          {"encoder_stage_s", plan.encoder_stage_s},
          {"llm_stage_s", plan.llm_stage_s},
          {"expected_iteration_s", plan.expected_makespan_s},
          {"encoder_memory_bytes", plan.encoder_memory},
          {"llm_memory_bytes", plan.llm_memory}};
}

nlohmann::json search_json(const dflop::SearchResult& search) {
  nlohmann::json out = {
      {"candidates", search.candidates}, {"evaluated", search.evaluated}, {"fitting", search.fitting}};
  out["best"] = search.best ? plan_json(*search.best) : nlohmann::json();
  return out;
}

nlohmann::json profiles_json(const std::vector<ComponentProfile>& profiles) {
  nlohmann::json out = nlohmann::json::array();
  for (const ComponentProfile& p : profiles) {
    out.push_back({{"tp", p.tp},
                   {"layers", p.layers},
                   {"sizes", p.throughput.x()},
                   {"flops_per_s", p.throughput.y()},
                   {"attention_flops_per_s", p.attention_throughput.y()},
                   {"activation_bytes_per_unit", p.activations_per_unit.y()},
                   {"model_state_bytes", {{"layers", p.model_state.x()}, {"bytes", p.model_state.y()}}}});
  }
  return out;
}

}  // namespace

std::string render_dflop_report(const std::string& subject, const DflopReport& report) {
  std::string out = fmt::format(
      "DFLOP on {}: {} GPUs ({} per node, {} each), {} samples an iteration\n"
      "Data Profiler: {} samples drawn; a mean {:.2f} images{} and {:.0f} LLM tokens a sample\n",
      subject, report.gpus, report.gpus_per_node, format_bytes(report.memory_capacity), report.global_batch,
      report.data.samples.size(), report.data.mean_images,
      report.data.mean_frames > 0.0 ? fmt::format(" ({:.2f} of them video frames)", report.data.mean_frames) : "",
      report.data.mean_tokens);
  out +=
      fmt::format("Model Profiler: {} (layer, shape) points priced on weft's kernels\n", report.profile.measurements);
  for (const ComponentProfile& p : report.profile.encoder)
    out += fmt::format("  encoder TP {}: E_thr {} TFLOP/s per GPU\n", p.tp, rates_text(p.throughput, "images"));
  for (const ComponentProfile& p : report.profile.llm) {
    out += fmt::format("  LLM TP {}: L_lin_thr {}; L_attn_thr {} TFLOP/s per GPU\n", p.tp,
                       rates_text(p.throughput, "tokens"), rates_text(p.attention_throughput, "tokens"));
  }
  out += fmt::format(
      "\nData-aware 3D parallelism optimizer (Algorithm 1): {} layout pairs, {} with each microbatch count, {} "
      "within memory\n  ",
      report.dflop.candidates, report.dflop.evaluated, report.dflop.fitting);
  out += plan_text(*report.dflop.best);
  out +=
      fmt::format("The baselines' uniform layouts (one TP and DP for both), searched the same way: {} layout pairs\n",
                  report.uniform.candidates);
  out += report.uniform.best ? "  " + plan_text(*report.uniform.best) : "  none fits\n";

  out += fmt::format("\nOnline microbatch scheduler (CBC's ILP within {} a batch, else LPT):\n",
                     limits_text(report.ilp_limits));
  TextTable steps;
  for (const char* name : {"batch", "buckets", "split", "C_max", "lower bound", "random split's C_max"})
    steps.add_column(name, std::string_view(name) == "split" ? TextTable::Align::left : TextTable::Align::right);
  for (std::size_t k = 0; k < report.scheduler.size(); ++k) {
    const dflop::SchedulerStep& step = report.scheduler[k];
    steps.add_row({std::to_string(k + 1), std::to_string(step.schedule.buckets.size()), method_text(step.schedule),
                   fmt::format("{:.1f} ms", step.schedule.c_max * 1e3),
                   fmt::format("{:.1f} ms", step.schedule.lower_bound * 1e3),
                   fmt::format("{:.1f} ms", step.random_c_max * 1e3)});
  }
  out += steps.render("  ");

  out += fmt::format(
      "\nAdaptive correction (§3.4.3: a shape's penalty once its observed duration is {:.0f}% off the estimate; "
      "tracking costs {:.0f}% of a batch and stops when its mean benefit over {} batches does not exceed that):\n",
      report.correction_options.deviation * 100.0, report.correction_options.cost * 100.0,
      report.correction_options.window);
  TextTable tracking;
  for (const char* name : {"batch", "tracking", "shapes with penalties", "samples corrected", "benefit B"})
    tracking.add_column(name, TextTable::Align::right);
  for (std::size_t k = 0; k < report.correction.size(); ++k) {
    const dflop::CorrectionStep& step = report.correction[k];
    tracking.add_row({std::to_string(k + 1), step.tracking ? "yes" : "no", std::to_string(step.penalties),
                      std::to_string(step.corrected),
                      step.benefit ? fmt::format("{:+.1f}%", *step.benefit * 100.0) : "n/a"});
  }
  out += tracking.render("  ");
  if (report.anomalies.rate > 0.0) {
    out += fmt::format("  Anomalies: {:.1f}% of the shapes delayed by {:.0f}% of the largest expected stage duration\n",
                       report.anomalies.rate * 100.0, report.anomalies.latency * 100.0);
  }

  out += fmt::format("\nRuns on the stage model ({} batches, 1F1B, then each stage's gradient all-reduce):\n",
                     report.scheduler.size());
  TextTable runs;
  runs.add_column("run", TextTable::Align::left);
  for (const char* name : {"iteration", "samples/s", "TFLOP/s per GPU", "vs the first"})
    runs.add_column(name, TextTable::Align::right);
  const double reference = report.runs.empty() ? 0.0 : report.runs.front().samples_per_s;
  for (const DflopRun& run : report.runs) {
    runs.add_row({run.name, format_seconds(run.mean_iteration_s), fmt::format("{:.1f}", run.samples_per_s),
                  fmt::format("{:.1f}", run.tflops_per_gpu), fmt::format("{:.2f}x", run.samples_per_s / reference)});
  }
  out += runs.render("  ");
  out += full_simulation_text(report.full);
  // Wall-clock times last: they differ run to run.
  double solve_ms = 0.0;
  double slowest_ms = 0.0;
  for (const dflop::SchedulerStep& step : report.scheduler) {
    solve_ms += step.solve_ms;
    slowest_ms = std::max(slowest_ms, step.solve_ms);
  }
  out += fmt::format(
      "\nPlanning overhead (Table 4): Model Profiler {:.1f} ms, Algorithm 1 {:.1f} ms (uniform layouts {:.1f} ms), "
      "scheduler {:.1f} ms a batch (at most {:.1f} ms)\n",
      report.profile_ms, report.dflop_search_ms, report.uniform_search_ms,
      report.scheduler.empty() ? 0.0 : solve_ms / static_cast<double>(report.scheduler.size()), slowest_ms);
  return out;
}

nlohmann::json dflop_json(const std::string& scenario, const DflopReport& report) {
  nlohmann::json out = {{"scenario", scenario},
                        {"gpus", report.gpus},
                        {"gpus_per_node", report.gpus_per_node},
                        {"memory_bytes", report.memory_capacity},
                        {"global_batch", report.global_batch},
                        {"data",
                         {{"samples", report.data.samples.size()},
                          {"mean_images", report.data.mean_images},
                          {"mean_frames", report.data.mean_frames},
                          {"mean_tokens", report.data.mean_tokens}}},
                        {"flops",
                         {{"encoder_per_image", report.profile.flops.encoder_per_image},
                          {"llm_linear_per_token", report.profile.flops.llm_linear_per_token},
                          {"llm_attention_per_token_squared", report.profile.flops.llm_attention_per_token_squared}}},
                        {"encoder_profiles", profiles_json(report.profile.encoder)},
                        {"llm_profiles", profiles_json(report.profile.llm)},
                        {"dflop", search_json(report.dflop)},
                        {"uniform", search_json(report.uniform)}};
  nlohmann::json steps = nlohmann::json::array();
  for (const dflop::SchedulerStep& step : report.scheduler) {
    steps.push_back({{"buckets", step.schedule.buckets},
                     {"split", step.schedule.method == BucketMethod::ilp ? "ilp" : "lpt"},
                     {"optimal", step.schedule.optimal},
                     {"c_max_s", step.schedule.c_max},
                     {"lower_bound_s", step.schedule.lower_bound},
                     {"random_c_max_s", step.random_c_max},
                     {"solve_ms", step.solve_ms}});
  }
  out["scheduler"] = std::move(steps);
  // 0: no such limit.
  out["scheduler_limits"] = {{"seconds", report.ilp_limits.seconds}, {"nodes", report.ilp_limits.nodes}};
  nlohmann::json correction = nlohmann::json::array();
  for (const dflop::CorrectionStep& step : report.correction) {
    correction.push_back({{"tracking", step.tracking},
                          {"penalties", step.penalties},
                          {"corrected", step.corrected},
                          {"benefit", step.benefit ? nlohmann::json(*step.benefit) : nlohmann::json()}});
  }
  out["correction"] = std::move(correction);
  out["anomalies"] = {{"rate", report.anomalies.rate}, {"latency", report.anomalies.latency}};
  nlohmann::json runs = nlohmann::json::array();
  for (const DflopRun& run : report.runs) {
    runs.push_back({{"name", run.name},
                    {"plan", plan_json(run.plan)},
                    {"split", run.split == BucketMethod::random ? "random" : "scheduler"},
                    {"iteration_s", run.iteration_s},
                    {"mean_iteration_s", run.mean_iteration_s},
                    {"samples_per_s", run.samples_per_s},
                    {"tflops_per_gpu", run.tflops_per_gpu}});
  }
  out["runs"] = std::move(runs);
  nlohmann::json full = nlohmann::json::array();
  for (const dflop::FullSimulation& run : report.full) {
    full.push_back({{"layout", run.layout},
                    {"plan", plan_json(run.plan)},
                    {"sample", {{"images", run.sample.images}, {"tokens", run.sample.seq_len}}},
                    {"samples", run.samples},
                    {"stage_model_s", run.stage_model_s},
                    {"iteration_s", run.iteration_s ? nlohmann::json(*run.iteration_s) : nlohmann::json()},
                    {"samples_per_s", run.samples_per_s},
                    {"out_of_memory", run.out_of_memory},
                    {"refused", run.refused}});
  }
  out["full_simulation"] = std::move(full);
  out["timings_ms"] = {
      {"profile", report.profile_ms}, {"search", report.dflop_search_ms}, {"uniform_search", report.uniform_search_ms}};
  return out;
}

}  // namespace weft
