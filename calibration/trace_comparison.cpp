#include "calibration/trace_comparison.hpp"

#include <algorithm>
#include <cstdio>
#include <set>

namespace weft {
namespace {

// "stage 3 / tp 0 / dp 0 (...)" -> 3 for a rank; "p2p stage 1 -> 2 ..." -> 1 for a link.
struct ProcessRole {
  int stage = -1;
  bool rank = false;
};

ProcessRole role_of(const std::string& label) {
  ProcessRole role;
  int stage = 0;
  if (std::sscanf(label.c_str(), "stage %d /", &stage) == 1) return {stage, true};
  if (std::sscanf(label.c_str(), "p2p stage %d ->", &stage) == 1) return {stage, false};
  return role;
}

}  // namespace

TraceSummary summarize_trace(const JsonCursor& root) {
  TraceSummary summary;
  const JsonCursor other = root.at("otherData");
  summary.iteration_s = other.at("makespan_ns").as_nonnegative_number() * 1e-9;
  summary.iteration_range_s = {summary.iteration_s, summary.iteration_s};
  if (const auto measured = other.find("measured")) {
    for (const JsonCursor& iteration : measured->at("iteration_ns").elements()) {
      const double seconds = iteration.as_nonnegative_number() * 1e-9;
      summary.iteration_range_s = {std::min(summary.iteration_range_s.first, seconds),
                                   std::max(summary.iteration_range_s.second, seconds)};
    }
  }
  const JsonCursor events = root.at("traceEvents");
  const std::vector<JsonCursor> all = events.elements();
  std::map<std::int64_t, ProcessRole> processes;
  std::map<std::pair<std::int64_t, std::int64_t>, bool> compute_thread;
  for (const JsonCursor& event : all) {
    if (event.at("ph").as_string() != "M") continue;
    const std::string name = event.at("name").as_string();
    const std::int64_t pid = event.at("pid").as_int();
    if (name == "process_name") processes[pid] = role_of(event.at("args").at("name").as_string());
    if (name == "thread_name") {
      compute_thread[{pid, event.at("tid").as_int()}] = event.at("args").at("name").as_string() == "compute";
    }
  }
  std::map<std::int64_t, double> compute_of_rank;  // by pid
  std::map<int, int> ranks_per_stage;
  for (const auto& [pid, role] : processes) {
    if (role.rank) ++ranks_per_stage[role.stage];
  }
  if (ranks_per_stage.empty()) events.fail("no rank processes (labelled \"stage N / ...\"): not a weft trace");
  for (const JsonCursor& event : all) {
    if (event.at("ph").as_string() != "X") continue;
    const std::int64_t pid = event.at("pid").as_int();
    const auto process = processes.find(pid);
    if (process == processes.end() || process->second.stage < 0) continue;
    const int stage = process->second.stage;
    const std::string op_class = event.at("args").at("class").as_string();
    if (op_class == "recv" || !ranks_per_stage.contains(stage)) continue;
    // A measured op's kernels may leave gaps where the host was slower than the device; its
    // "busy_us" is the time its kernels ran.
    const auto busy = event.at("args").find("busy_us");
    const double seconds = (busy ? busy->as_nonnegative_number() : event.at("dur").as_nonnegative_number()) * 1e-6 /
                           ranks_per_stage[stage];
    summary.class_s[op_class][stage] += seconds;
    if (!process->second.rank) continue;
    const auto thread = compute_thread.find({pid, event.at("tid").as_int()});
    if (thread != compute_thread.end() && thread->second) {
      summary.compute_s[stage] += seconds;
      compute_of_rank[pid] += seconds;
    }
  }
  std::map<int, std::pair<double, double>> extremes;  // by stage: fastest and slowest rank
  for (const auto& [pid, role] : processes) {
    if (!role.rank || ranks_per_stage[role.stage] < 2) continue;
    const double seconds = compute_of_rank[pid];
    auto& range = extremes.try_emplace(role.stage, seconds, seconds).first->second;
    range = {std::min(range.first, seconds), std::max(range.second, seconds)};
  }
  for (const auto& [stage, range] : extremes) {
    if (range.first > 0.0)
      summary.rank_spread = std::max(summary.rank_spread, (range.second - range.first) / range.first);
  }
  return summary;
}

TraceComparison compare_traces(const TraceSummary& simulated, const TraceSummary& measured) {
  TraceComparison comparison;
  comparison.iteration = {"iteration", simulated.iteration_s, measured.iteration_s};
  comparison.measured_range_s = measured.iteration_range_s;
  comparison.measured_rank_spread = measured.rank_spread;
  std::set<int> stages;
  for (const auto& [stage, s] : simulated.compute_s) stages.insert(stage);
  for (const auto& [stage, s] : measured.compute_s) stages.insert(stage);
  auto value = [](const std::map<int, double>& map, int key) {
    const auto it = map.find(key);
    return it == map.end() ? 0.0 : it->second;
  };
  std::vector<double> rates;  // measured / simulated compute, per stage both traces time
  for (int stage : stages) {
    const ComparedValue compute = {"stage " + std::to_string(stage), value(simulated.compute_s, stage),
                                   value(measured.compute_s, stage)};
    if (compute.simulated_s > 0.0 && compute.measured_s > 0.0)
      rates.push_back(compute.measured_s / compute.simulated_s);
    comparison.stages.push_back(compute);
  }
  if (!rates.empty()) {
    const auto [least, most] = std::minmax_element(rates.begin(), rates.end());
    comparison.measured_stage_rate_spread = (*most - *least) / *least;
  }
  std::set<std::string> classes;
  for (const auto& [name, s] : simulated.class_s) classes.insert(name);
  for (const auto& [name, s] : measured.class_s) classes.insert(name);
  auto total = [](const std::map<std::string, std::map<int, double>>& map, const std::string& name) {
    double sum = 0.0;
    if (const auto it = map.find(name); it != map.end()) {
      for (const auto& [stage, seconds] : it->second) sum += seconds;
    }
    return sum;
  };
  for (const std::string& name : classes) {
    comparison.classes.push_back({name, total(simulated.class_s, name), total(measured.class_s, name)});
  }
  return comparison;
}

}  // namespace weft
