#include "simulator/workload/training_report.hpp"

#include <algorithm>

#include "simulator/engine/expanded_ops.hpp"
#include "simulator/workload/model.hpp"

namespace weft {
namespace {

// Event codes: the low 4 bits say which counter changes (0 compute, 1 + group kind) and whether
// it starts (bit 3 clear) or ends; the time sits above them, so sorting the packed values orders
// events by time. The order of events at one instant does not matter: they span no time.
constexpr std::uint64_t kEndBit = 8;

std::uint64_t event(TimeNs time, std::uint64_t slot, bool end) {
  return (static_cast<std::uint64_t>(time) << 4) | slot | (end ? kEndBit : 0);
}

// The packed events of every op with a duration, by the device it ran on (composites expanded).
// Counts the ops in `op_count`.
std::vector<std::vector<std::uint64_t>> events_by_device(const TrainingWorkload& workload,
                                                         const SimulationResult& result, std::size_t& op_count) {
  const Graph& graph = workload.graph;
  std::vector<std::vector<std::uint64_t>> events(graph.device_count());
  op_count = 0;
  for_each_expanded_op(graph, result, [&](const ExpandedOp& expanded) {
    ++op_count;
    if (expanded.end == expanded.start) return;
    const OpWork& work = expanded.owner->op_work(expanded.op);
    std::uint64_t slot = 0;
    if (category_of(work.op_class) == OpCategory::communication) {
      const CommGroupKind kind =
          work.comm_group == 0 ? CommGroupKind::pp : workload.cost_model->group(work.comm_group).kind;
      slot = 1 + static_cast<std::uint64_t>(kind);
    }
    auto& device = events[graph.stream(expanded.stream).device.value()];
    device.push_back(event(expanded.start, slot, false));
    device.push_back(event(expanded.end, slot, true));
  });
  return events;
}

// Time split of one rank, from the intervals of the ops on its device and on its links.
void account_time(const SimulationResult& result, const std::vector<std::vector<std::uint64_t>>& by_device,
                  const SimulatedRank& rank, StageReport& out) {
  std::vector<std::uint64_t> events = by_device[rank.device.value()];
  for (DeviceId link : rank.links) {
    events.insert(events.end(), by_device[link.value()].begin(), by_device[link.value()].end());
  }
  std::sort(events.begin(), events.end());
  int computing = 0;
  std::array<int, kCommGroupKindCount> communicating{};
  int comm_total = 0;
  TimeNs previous = 0;
  for (std::uint64_t code : events) {
    const auto time = static_cast<TimeNs>(code >> 4);
    const double span = static_cast<double>(time - previous) / kNsPerSecond;
    if (computing > 0) {
      out.compute_s += span;
    } else if (comm_total > 0) {
      for (std::size_t k = 0; k < kCommGroupKindCount; ++k) {
        out.exposed_comm_s[k] += span * communicating[k] / comm_total;
      }
    }
    previous = time;
    const int step = (code & kEndBit) != 0 ? -1 : 1;
    const std::uint64_t slot = code & (kEndBit - 1);
    if (slot == 0) {
      computing += step;
    } else {
      communicating[slot - 1] += step;
      comm_total += step;
    }
  }
  const double iteration = static_cast<double>(result.makespan) / kNsPerSecond;
  double exposed = 0.0;
  for (double seconds : out.exposed_comm_s) exposed += seconds;
  out.bubble_s = std::max(0.0, iteration - out.compute_s - exposed);
}

}  // namespace

TrainingReport make_training_report(const TrainingScenario& scenario, const TrainingWorkload& workload,
                                    const SimulationResult& result) {
  TrainingReport report;
  const Graph& graph = workload.graph;
  report.iteration_time_s = static_cast<double>(result.makespan) / kNsPerSecond;
  const double samples = static_cast<double>(scenario.training.global_batch);
  report.samples_per_s = samples / report.iteration_time_s;
  report.tokens_per_s = samples * static_cast<double>(scenario.training.seq_len) / report.iteration_time_s;
  report.gpus = scenario.parallel.world_size();
  report.model_flops_per_iteration = workload.model_flops_per_iteration;
  report.tflops_per_gpu =
      report.model_flops_per_iteration / report.iteration_time_s / static_cast<double>(report.gpus) / 1e12;
  report.peak_tflops = scenario.cluster.gpu.peak(scenario.training.dtype) / 1e12;
  report.mfu = report.tflops_per_gpu / report.peak_tflops;
  report.parameters = Model(scenario.model).parameter_count();
  report.microbatches = workload.microbatches;
  report.simulated_ranks = workload.ranks.size();
  report.folded = workload.folded;

  const auto by_device = events_by_device(workload, result, report.simulated_ops);
  for (const SimulatedRank& rank : workload.ranks) {
    const int stage = rank.coordinates.pp;
    const DeviceResult& device = result.devices[rank.device.value()];
    if (stage >= static_cast<int>(report.stages.size())) {
      StageReport entry;
      entry.stage = stage;
      entry.rank_label = graph.device(rank.device).name;
      entry.static_memory = rank.static_memory;
      entry.memory_capacity = device.memory_capacity;
      account_time(result, by_device, rank, entry);
      report.stages.push_back(entry);
    }
    StageReport& entry = report.stages[static_cast<std::size_t>(stage)];
    entry.peak_memory = std::max(entry.peak_memory, device.peak_memory);
    entry.activation_peak = entry.peak_memory - entry.static_memory.total();
    entry.oom = entry.oom || device.oom;
    report.oom = report.oom || device.oom;
  }
  return report;
}

}  // namespace weft
