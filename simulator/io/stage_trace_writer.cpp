#include "simulator/io/stage_trace_writer.hpp"

#include <algorithm>
#include <map>
#include <string>
#include <string_view>
#include <tuple>

#include <nlohmann/json.hpp>

#include "simulator/planner/dip/rank_actions.hpp"

namespace weft {
namespace {

double microseconds(TimeNs ns) { return static_cast<double>(ns) / 1e3; }

std::string stage_name(const TrainingScenario& scenario, const dip::DipPlan& plan, std::size_t i) {
  const dip::StageWork& work = plan.flows.work[i];
  return std::string(plan.flows.stages[i].backward ? "B " : "F ") + scenario.model.modules[work.module].name + " mb" +
         std::to_string(work.microbatch) + "." + std::to_string(work.sub_microbatch);
}

nlohmann::json stage_args(const dip::DipPlan& plan, std::size_t i) {
  const dip::StageWork& work = plan.flows.work[i];
  std::map<std::string, int> recompute;
  for (dip::LayerPolicy policy : plan.policy[i]) ++recompute[std::string(dip::kLayerPolicyNames.name(policy))];
  return {{"microbatch", work.microbatch},
          {"sub_microbatch", work.sub_microbatch},
          {"chunk", work.chunk},
          {"layers", std::to_string(work.first_layer) + "-" + std::to_string(work.end_layer - 1)},
          {"layer_policies", recompute},
          {"activation_bytes", plan.flows.stages[i].memory}};
}

// Per rank, (time, change) of the bytes it holds; frees before holds at one instant.
std::vector<std::vector<std::pair<TimeNs, Bytes>>> memory_changes(const dip::DipPlan& plan) {
  std::vector<std::vector<std::tuple<TimeNs, int, Bytes>>> changes(plan.schedule.order.size());
  const auto& stages = plan.flows.stages;
  for (std::size_t i = 0; i < stages.size(); ++i) {
    auto& rank = changes[static_cast<std::size_t>(stages[i].rank)];
    if (!stages[i].backward && stages[i].memory > 0) rank.emplace_back(plan.schedule.start[i], 1, stages[i].memory);
    if (stages[i].frees != dip::PipelineStage::kNone)
      rank.emplace_back(plan.schedule.end[i], 0, -stages[stages[i].frees].memory);
  }
  std::vector<std::vector<std::pair<TimeNs, Bytes>>> held(changes.size());
  for (std::size_t r = 0; r < changes.size(); ++r) {
    std::sort(changes[r].begin(), changes[r].end());
    Bytes bytes = 0;
    for (const auto& [time, order, change] : changes[r]) {
      bytes += change;
      if (!held[r].empty() && held[r].back().first == time) {
        held[r].back().second = bytes;
      } else {
        held[r].emplace_back(time, bytes);
      }
    }
  }
  return held;
}

}  // namespace

void write_stage_trace(std::ostream& out, const TrainingScenario& scenario, const dip::DipPlan& plan) {
  nlohmann::json events = nlohmann::json::array();
  const std::size_t ranks = plan.schedule.order.size();
  for (std::size_t r = 0; r < ranks; ++r) {
    const auto pid = static_cast<int>(r);
    events.push_back({{"name", "process_name"},
                      {"ph", "M"},
                      {"pid", pid},
                      {"tid", 0},
                      {"args", {{"name", "pipeline rank " + std::to_string(r)}}}});
    events.push_back(
        {{"name", "process_sort_index"}, {"ph", "M"}, {"pid", pid}, {"tid", 0}, {"args", {{"sort_index", pid}}}});
    events.push_back({{"name", "thread_name"}, {"ph", "M"}, {"pid", pid}, {"tid", 0}, {"args", {{"name", "stages"}}}});
  }
  const auto& stages = plan.flows.stages;
  for (std::size_t i = 0; i < stages.size(); ++i) {
    events.push_back({{"name", stage_name(scenario, plan, i)},
                      {"cat", stages[i].backward ? "backward" : "forward"},
                      {"ph", "X"},
                      {"pid", stages[i].rank},
                      {"tid", 0},
                      {"ts", microseconds(plan.schedule.start[i])},
                      {"dur", microseconds(stages[i].duration)},
                      {"args", stage_args(plan, i)}});
  }
  for (const auto& rank : dip::rank_actions(stages, plan.schedule)) {
    for (const dip::RankAction& action : rank) {
      if (action.kind != ActionKind::isend) continue;
      const std::size_t u = action.producer;
      const std::size_t v = action.consumer;
      // A flow arrow from the producer's end to the consumer's start.
      auto end_of_arrow = [&](const char* phase, std::size_t stage, TimeNs time) {
        nlohmann::json event = {{"name", "transfer"},      {"cat", "transfer"},         {"ph", phase},
                                {"id", action.transfer},   {"pid", stages[stage].rank}, {"tid", 0},
                                {"ts", microseconds(time)}};
        if (std::string_view(phase) == "f") event["bp"] = "e";
        events.push_back(std::move(event));
      };
      end_of_arrow("s", u, plan.schedule.end[u]);
      end_of_arrow("f", v, plan.schedule.start[v]);
    }
  }
  const auto held = memory_changes(plan);
  for (std::size_t r = 0; r < held.size(); ++r) {
    for (const auto& [time, bytes] : held[r]) {
      events.push_back({{"name", "activations"},
                        {"ph", "C"},
                        {"pid", static_cast<int>(r)},
                        {"ts", microseconds(time)},
                        {"args", {{"bytes", bytes}}}});
    }
  }
  out << nlohmann::json{{"traceEvents", events}, {"displayTimeUnit", "ms"}}.dump() << '\n';
}

}  // namespace weft
