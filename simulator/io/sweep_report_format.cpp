#include "simulator/io/sweep_report_format.hpp"

#include <fmt/format.h>

#include "simulator/core/format_units.hpp"
#include "simulator/io/csv.hpp"
#include "simulator/io/text_table.hpp"
#include "simulator/io/training_report_format.hpp"
#include "simulator/planner/plan_enumeration.hpp"

namespace weft {

TimeShares time_shares(const TrainingReport& report) {
  TimeShares shares;
  if (report.stages.empty() || report.iteration_time_s <= 0) return shares;
  const double scale = 1.0 / (report.iteration_time_s * static_cast<double>(report.stages.size()));
  for (const StageReport& stage : report.stages) {
    shares.compute += stage.compute_s * scale;
    shares.bubble += stage.bubble_s * scale;
    for (std::size_t k = 0; k < kCommGroupKindCount; ++k) {
      shares.exposed_by_group[k] += stage.exposed_comm_s[k] * scale;
      shares.exposed_comm += stage.exposed_comm_s[k] * scale;
    }
  }
  return shares;
}

std::string render_sweep_report(const TrainingScenario& base, int gpus, const SweepResult& r, std::size_t top) {
  std::string out =
      fmt::format("Model    {}, {} layers\nCluster  {}: {} GPUs ({})\nBatch    {} samples of {} tokens\n\n",
                  base.model.name, base.model.layers(), base.cluster.name, gpus, cluster_gpus_text(base.cluster),
                  base.training.global_batch, base.training.seq_len);
  out += fmt::format("Plans    {} considered: {} invalid, {} out of memory by estimate, {} simulated", r.considered,
                     r.invalid, r.dropped_by_memory_estimate, r.simulated);
  if (r.pruned > 0) out += fmt::format(", {} pruned (slower by their compute alone than the top {})", r.pruned, top);
  out += fmt::format("; {} out of memory in all, {} fit\n", r.out_of_memory, r.feasible);
  if (!r.invalid_by_reason.empty()) {
    out += "Invalid  ";
    bool first = true;
    for (const auto& [reason, count] : r.invalid_by_reason) {
      out += fmt::format("{}{} x {}", first ? "" : "\n         ", count, reason);
      first = false;
    }
    out += "\n";
  }
  if (r.feasible == 0) {
    out += "\nNo plan fits: every plan of the grid is invalid or out of memory.";
    if (r.out_of_memory > 0)
      out += " More GPUs, memory-saving options (zero=1, recompute=full) or a wider grid may help.";
    out += "\n";
    return out;
  }
  TextTable table;
  for (const char* header :
       {"rank", "plan", "iteration", "tokens/s", "MFU", "TFLOP/s/GPU", "peak memory", "bubble", "exposed comm"}) {
    const bool left = std::string_view(header) == "plan";
    table.add_column(header, left ? TextTable::Align::left : TextTable::Align::right);
  }
  std::size_t rank = 0;
  for (const PlanOutcome& plan : r.plans) {
    if (plan.status != PlanStatus::ok || rank >= top) break;
    const TrainingReport& report = *plan.report;
    const TimeShares shares = time_shares(report);
    table.add_row({std::to_string(++rank), plan.label, format_seconds(report.iteration_time_s),
                   fmt::format("{:.0f}", report.tokens_per_s), format_percent(report.mfu),
                   fmt::format("{:.1f}", report.tflops_per_gpu), format_bytes(plan.peak_memory()),
                   format_percent(shares.bubble), format_percent(shares.exposed_comm)});
  }
  out += fmt::format("\nTop {} by throughput (then memory headroom):\n", rank);
  out += table.render("  ");
  return out;
}

std::string sweep_csv_cells(const PlanOutcome& plan) {
  const ParallelPlan& p = plan.scenario.parallel;
  std::string cells =
      fmt::format("{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},", p.tp, p.pp, p.dp, p.cp, p.vpp,
                  plan.scenario.training.micro_batch, p.sequence_parallel ? 1 : 0, recompute_name(p.recompute_choice()),
                  p.zero, p.shard_dp(), kPipelineScheduleNames.name(p.schedule),
                  p.modality_stages.empty() ? "shared" : "modality", csv_quoted(module_stages_text(plan.scenario)),
                  plan_partition_name(p), kPlanStatusNames.name(plan.status), csv_quoted(plan.reason));
  if (plan.simulated()) {
    const TrainingReport& report = *plan.report;
    const TimeShares shares = time_shares(report);
    return cells + fmt::format("{},{},{},{},{},1,{},{}", csv_number(report.iteration_time_s), csv_number(report.mfu),
                               csv_number(report.tokens_per_s), csv_number(report.tflops_per_gpu), plan.peak_memory(),
                               csv_number(shares.bubble), csv_number(shares.exposed_comm));
  }
  if (plan.status == PlanStatus::oom || plan.status == PlanStatus::pruned) {
    return cells + fmt::format(",,,,{},0,,", plan.peak_memory());  // the memory estimate
  }
  return cells + ",,,,,,,";
}

void write_sweep_csv(std::ostream& out, const SweepResult& result) {
  out << "rank," << kSweepCsvPlanColumns << '\n';
  std::size_t rank = 0;
  for (const PlanOutcome& plan : result.plans) {
    out << (plan.status == PlanStatus::ok ? ++rank : 0) << ',' << sweep_csv_cells(plan) << '\n';
  }
}

namespace {

// Each module before the last on a mesh of its own, as parallel.modules gives it.
nlohmann::json module_meshes_json(const TrainingScenario& scenario) {
  const ParallelPlan& p = scenario.parallel;
  const auto& modules = scenario.model.modules;
  nlohmann::json meshes = nlohmann::json::object();
  for (std::size_t m = 0; m + 1 < modules.size(); ++m) {
    if (!modules[m].projector) meshes[modules[m].name] = {{"tp", p.module_meshes[m].tp}, {"dp", p.module_meshes[m].dp}};
  }
  return meshes;
}

}  // namespace

nlohmann::json sweep_json(const TrainingScenario& base, int gpus, const SweepResult& r) {
  nlohmann::json plans = nlohmann::json::array();
  for (const PlanOutcome& plan : r.plans) {
    const ParallelPlan& p = plan.scenario.parallel;
    nlohmann::json entry = {{"label", plan.label},
                            {"tp", p.tp},
                            {"pp", p.pp},
                            {"dp", p.dp},
                            {"cp", p.cp},
                            {"vpp", p.vpp},
                            {"micro_batch", plan.scenario.training.micro_batch},
                            {"sequence_parallel", p.sequence_parallel},
                            {"recompute", recompute_name(p.recompute_choice())},
                            {"zero", p.zero},
                            {"dp_shard", p.shard_dp()},
                            {"schedule", kPipelineScheduleNames.name(p.schedule)},
                            {"layout", p.modality_stages.empty() ? "shared" : "modality"},
                            {"module_stages", module_stages_text(plan.scenario)},
                            {"partition", plan_partition_name(p)},
                            {"stage_layers", p.stage_layers},
                            {"status", kPlanStatusNames.name(plan.status)},
                            {"reason", plan.reason}};
    if (p.per_module_meshes()) entry["modules"] = module_meshes_json(plan.scenario);
    if (plan.status != PlanStatus::invalid) {
      entry["peak_memory_bytes"] = plan.peak_memory();
      entry["memory_simulated"] = plan.simulated();
    }
    if (plan.simulated()) {
      const TrainingReport& report = *plan.report;
      const TimeShares shares = time_shares(report);
      entry["iteration_time_s"] = report.iteration_time_s;
      entry["mfu"] = report.mfu;
      entry["tokens_per_s"] = report.tokens_per_s;
      entry["tflops_per_gpu"] = report.tflops_per_gpu;
      entry["bubble_share"] = shares.bubble;
      entry["exposed_comm_share"] = shares.exposed_comm;
      entry["stage_peak_memory_bytes"] = plan.stage_memory;
    }
    plans.push_back(std::move(entry));
  }
  return {{"model", base.model.name},
          {"cluster", base.cluster.name},
          {"gpus", gpus},
          {"considered", r.considered},
          {"invalid", r.invalid},
          {"invalid_by_reason", r.invalid_by_reason},
          {"dropped_by_memory_estimate", r.dropped_by_memory_estimate},
          {"simulated", r.simulated},
          {"pruned", r.pruned},
          {"out_of_memory", r.out_of_memory},
          {"feasible", r.feasible},
          {"plans", std::move(plans)}};
}

}  // namespace weft
