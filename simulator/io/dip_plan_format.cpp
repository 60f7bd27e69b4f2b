#include "simulator/io/dip_plan_format.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "simulator/core/format_units.hpp"
#include "simulator/io/text_table.hpp"
#include "simulator/planner/dip/dip_plan_simulation.hpp"
#include "simulator/planner/dip/rank_actions.hpp"

namespace weft {
namespace {

using dip::DipPlan;
using dip::StageWork;

TimeNs simulated_time(const DipPlan& plan) { return plan.simulation->result.makespan; }

std::string module_name(const TrainingScenario& scenario, std::size_t module) {
  return scenario.model.modules[module].name;
}

std::string batch_line(const DipPlan& plan) {
  SampleShape total;
  for (const SampleShape& shape : plan.shapes) {
    total.seq_len += shape.seq_len;
    total.images += shape.images;
    total.video_seconds += shape.video_seconds;
    total.audio_seconds += shape.audio_seconds;
  }
  std::string out = fmt::format("{} microbatches, {} tokens", plan.shapes.size(), total.seq_len);
  if (total.images > 0) out += fmt::format(", {} images", total.images);
  if (total.video_seconds > 0) out += fmt::format(", {:.1f} s of video", total.video_seconds);
  if (total.audio_seconds > 0) out += fmt::format(", {:.1f} s of audio", total.audio_seconds);
  return out;
}

// Layers per chunk, runs of equal counts folded: "8x3, 4x2" for 3,3,3,3,3,3,3,3,2,2,2,2.
std::string chunk_list(const std::vector<int>& layers) {
  std::string out;
  for (std::size_t c = 0; c < layers.size();) {
    std::size_t run = 1;
    while (c + run < layers.size() && layers[c + run] == layers[c]) ++run;
    out += (out.empty() ? "" : ", ") + (run == 1 ? "" : std::to_string(run) + "x") + std::to_string(layers[c]);
    c += run;
  }
  return out;
}

nlohmann::json stage_action(const TrainingScenario& scenario, const DipPlan& plan, const dip::RankAction& action) {
  const std::size_t i = action.stage;
  const StageWork& work = plan.flows.work[i];
  nlohmann::json recompute = nlohmann::json::array();
  for (dip::LayerPolicy policy : plan.policy[i]) recompute.push_back(dip::kLayerPolicyNames.name(policy));
  return {{"action", kActionKindNames.name(action.kind)},
          {"microbatch", work.microbatch},
          {"module", module_name(scenario, work.module)},
          {"sub_microbatch", work.sub_microbatch},
          {"chunk", work.chunk},
          {"layers", {work.first_layer, work.end_layer}},
          {"recompute", recompute},
          {"start_ms", static_cast<double>(plan.schedule.start[i]) / 1e6},
          {"end_ms", static_cast<double>(plan.schedule.end[i]) / 1e6}};
}

nlohmann::json rank_actions_json(const TrainingScenario& scenario, const DipPlan& plan) {
  const std::vector<std::vector<dip::RankAction>> ranks = dip::rank_actions(plan.flows.stages, plan.schedule);
  nlohmann::json out = nlohmann::json::array();
  for (std::size_t rank = 0; rank < ranks.size(); ++rank) {
    nlohmann::json actions = nlohmann::json::array();
    for (const dip::RankAction& action : ranks[rank]) {
      if (action.is_stage()) {
        actions.push_back(stage_action(scenario, plan, action));
      } else {
        actions.push_back(
            {{"action", kActionKindNames.name(action.kind)}, {"transfer", action.transfer}, {"peer", action.peer}});
      }
    }
    out.push_back({{"rank", rank}, {"actions", std::move(actions)}});
  }
  return out;
}

// Every DP replica's iteration under the scenario's schedule and as planned, and the iteration's:
// the slowest replica's of each.
std::string replica_table(const DipPlan& plan) {
  TextTable table;
  for (const char* header : {"DP replica", "scenario's plan", "planned", "speed-up"}) {
    table.add_column(header,
                     std::string_view(header) == "DP replica" ? TextTable::Align::left : TextTable::Align::right);
  }
  TimeNs baseline = 0;
  TimeNs planned = 0;
  auto row = [&](const std::string& name, TimeNs before, TimeNs after) {
    table.add_row({name, format_duration(before), format_duration(after),
                   fmt::format("{:+.1f}%", (static_cast<double>(before) / static_cast<double>(after) - 1.0) * 100.0)});
  };
  for (const dip::ReplicaOutcome& replica : plan.replicas) {
    row(std::to_string(replica.replica), replica.baseline, replica.planned);
    baseline = std::max(baseline, replica.baseline);
    planned = std::max(planned, replica.planned);
  }
  row("iteration (slowest)", baseline, planned);
  return "Each DP replica's batch on the stage model\n" + table.render("  ");
}

nlohmann::json schedule_json(const dip::ScheduleOutcome& step) {
  nlohmann::json out = {{"schedule", step.name},
                        {"iteration_ms", static_cast<double>(step.iteration) / 1e6},
                        {"busy_share", step.busy_share},
                        {"busiest_rank_ms", static_cast<double>(step.busiest_rank) / 1e6},
                        {"peak_activation_bytes", step.peak_activations}};
  if (step.most_memory > 0) out["most_memory_bytes"] = step.most_memory;  // a baseline's
  return out;
}

}  // namespace

std::string render_dip_report(const TrainingScenario& scenario, const DipPlan& plan, const dip::DipOptions& options) {
  const ParallelPlan& p = scenario.parallel;
  std::string out = fmt::format("Model    {}, {} layers\nCluster  {}: {} GPUs ({}), TP{} PP{} DP{}\n",
                                scenario.model.name, scenario.model.layers(), scenario.cluster.name,
                                scenario.cluster.gpus, scenario.cluster.gpu.name, p.tp, p.pp, p.dp);
  out += fmt::format(
      "Batch    {} (DP replica {}{})\n", batch_line(plan), plan.replica,
      plan.replicas.size() > 1
          ? fmt::format(", the slowest as planned of the {} with batches of their own", plan.replicas.size())
          : "");
  out += fmt::format("Memory   {} per GPU held for the iteration, {} left for activations\n\n",
                     format_bytes(plan.static_memory), format_bytes(plan.activation_limit));

  TextTable partition;
  for (const char* header : {"module", "layers", "sub-microbatch", "T_i", "segments", "layers per chunk"})
    partition.add_column(header,
                         std::string_view(header) == "module" ? TextTable::Align::left : TextTable::Align::right);
  for (const dip::ModuleSegments& m : plan.modules) {
    partition.add_row({module_name(scenario, m.module), std::to_string(m.layers),
                       m.sub_microbatch > 0 ? fmt::format("{} items", m.sub_microbatch) : "microbatch",
                       format_seconds(m.latency_s), std::to_string(m.segments), chunk_list(m.chunk_layers)});
  }
  out += "Modality-aware partition (papers/001 §5)\n" + partition.render("  ") + "\n";

  const dip::PrioritySearchResult& search = plan.search;
  out +=
      fmt::format("Search   {} segment groups, {} rankings scored in {:.2f} s on {} thread(s) ({} MCTS expansions{})",
                  plan.flows.follows.size(), search.evaluations, plan.search_s, options.threads, search.iterations,
                  search.exhausted ? ", space exhausted" : "");
  if (plan.searched_ranking) {
    out += fmt::format("; best found after {:.2f} s", search.improvements.back().seconds);
  } else {
    out += "; none beat microbatch order, which is kept";
  }
  out += options.slowest ? "\n         ranked for the SLOWEST schedule (--slowest)\n\n" : "\n\n";

  TextTable steps;
  for (const char* header : {"schedule", "iteration", "busy", "busiest rank", "speed-up", "peak activations"})
    steps.add_column(header, std::string_view(header) == "schedule" ? TextTable::Align::left : TextTable::Align::right);
  const double base = static_cast<double>(plan.steps.front().iteration);
  // A baseline over the memory limit (what a rank keeps and its peak activations) says so.
  const Bytes capacity = plan.static_memory + plan.activation_limit;
  auto add_step = [&](const dip::ScheduleOutcome& step, std::string name) {
    if (step.most_memory > capacity) name += " (over the memory limit: " + format_bytes(step.most_memory) + ")";
    steps.add_row({name, format_duration(step.iteration), format_percent(step.busy_share),
                   format_duration(step.busiest_rank),
                   fmt::format("{:+.1f}%", (base / static_cast<double>(step.iteration) - 1.0) * 100.0),
                   format_bytes(step.peak_activations)});
  };
  for (const dip::ScheduleOutcome& step : plan.steps) add_step(step, step.name);
  for (const dip::ScheduleOutcome& step : plan.other_baselines) add_step(step, "baseline: " + step.name);
  out += "Pipeline schedules on the stage model (papers/001 Table 5)\n" + steps.render("  ") + "\n";
  if (plan.returned_baseline.empty()) {
    out += options.slowest ? "Returned DIP's schedule (ranked for the slowest, so no baseline replaces it)\n"
                           : "Returned DIP's schedule, the fastest of these\n";
  } else {
    out += fmt::format(
        "Returned the baseline {}, faster than DIP's schedule: the full simulator's time below, --emit-plan, "
        "--trace and --json's ranks are of it\n",
        plan.returned_baseline);
  }
  if (plan.replicas.size() > 1) out += "\n" + replica_table(plan);
  out += fmt::format(
      "\nThe scenario's plan under the full simulator: {} (the stage model leaves out gradient reduction and the "
      "optimizer step)\n",
      format_duration(plan.megatron_simulated));
  out += fmt::format(
      "This plan under the full simulator, as weft live runs it: {} ({:+.1f}% against the stage model, which "
      "does not queue transfers that share a link{})\n",
      format_duration(simulated_time(plan)),
      (static_cast<double>(simulated_time(plan)) / static_cast<double>(plan.schedule.makespan) - 1.0) * 100.0,
      plan.overlaps_tp ? ", and overlaps the forward pass's TP communication with its GEMMs as the scenario's stack "
                         "does, where weft live runs TP collectives on their own"
                       : "");
  return out;
}

nlohmann::json dip_plan_json(const TrainingScenario& scenario, const DipPlan& plan) {
  nlohmann::json modules = nlohmann::json::array();
  for (const dip::ModuleSegments& m : plan.modules) {
    modules.push_back({{"name", module_name(scenario, m.module)},
                       {"layers", m.layers},
                       {"sub_microbatch", m.sub_microbatch},
                       {"latency_ms", m.latency_s * 1e3},
                       {"segments", m.segments},
                       {"chunk_layers", m.chunk_layers}});
  }
  nlohmann::json improvements = nlohmann::json::array();
  for (const dip::SearchImprovement& found : plan.search.improvements)
    improvements.push_back({{"seconds", found.seconds}, {"evaluations", found.evaluations}, {"score", found.score}});
  nlohmann::json steps = nlohmann::json::array();
  for (const dip::ScheduleOutcome& step : plan.steps) steps.push_back(schedule_json(step));
  nlohmann::json other_baselines = nlohmann::json::array();
  for (const dip::ScheduleOutcome& step : plan.other_baselines) other_baselines.push_back(schedule_json(step));
  // The baseline whose schedule the plan is, or null for DIP's own.
  const nlohmann::json returned_baseline =
      plan.returned_baseline.empty() ? nlohmann::json() : nlohmann::json(plan.returned_baseline);
  nlohmann::json replicas = nlohmann::json::array();
  for (const dip::ReplicaOutcome& replica : plan.replicas) {
    replicas.push_back({{"replica", replica.replica},
                        {"baseline_ms", static_cast<double>(replica.baseline) / 1e6},
                        {"planned_ms", static_cast<double>(replica.planned) / 1e6}});
  }
  return {{"format", "weft-dip-plan"},
          {"version", 1},
          {"replica", plan.replica},
          {"replicas", replicas},
          {"description", scenario.description},
          {"pp", scenario.parallel.pp},
          {"microbatches", plan.shapes.size()},
          {"modules", modules},
          {"static_memory_bytes", plan.static_memory},
          {"activation_limit_bytes", plan.activation_limit},
          {"search",
           {{"evaluations", plan.search.evaluations},
            {"iterations", plan.search.iterations},
            {"seconds", plan.search_s},
            {"exhausted", plan.search.exhausted},
            {"beat_microbatch_order", plan.searched_ranking},
            {"improvements", improvements}}},
          {"schedules", steps},
          {"other_baselines", other_baselines},
          {"returned_baseline", returned_baseline},
          {"simulated_baseline_ms", static_cast<double>(plan.megatron_simulated) / 1e6},
          {"simulated_plan_ms", static_cast<double>(simulated_time(plan)) / 1e6},
          {"iteration_ms", static_cast<double>(plan.schedule.makespan) / 1e6},
          {"stage_model_overlaps_tp", plan.overlaps_tp},
          {"ranks", rank_actions_json(scenario, plan)}};
}

}  // namespace weft
