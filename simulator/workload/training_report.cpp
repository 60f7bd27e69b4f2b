#include "simulator/workload/training_report.hpp"

#include <algorithm>
#include <map>
#include <memory>
#include <tuple>

#include "simulator/engine/expanded_ops.hpp"
#include "simulator/workload/multimodal_model.hpp"
#include "simulator/workload/rank_time_accounting.hpp"

namespace weft {
namespace {

// Which slot an op occupies: compute, or communication of its group's kind.
std::uint8_t slot_of(const OpWork& work, const ClusterCostModel& cost_model) {
  if (category_of(work.op_class) != OpCategory::communication) return 0;
  const CommGroupKind kind = work.comm_group == 0 ? CommGroupKind::pp : cost_model.group(work.comm_group).kind;
  return static_cast<std::uint8_t>(1 + static_cast<std::size_t>(kind));
}

void add_op_events(std::vector<ActivityProfile::Event>& events, const ExpandedOp& op, TimeNs origin,
                   const ClusterCostModel& cost_model) {
  if (op.end == op.start) return;
  const std::uint8_t slot = slot_of(op.owner->op_work(op.op), cost_model);
  events.push_back({op.start - origin, slot, 1});
  events.push_back({op.end - origin, slot, -1});
}

// The ops of every device as runs of activity: each composite's template ops as a profile per
// template device, made once per (template, schedule), and the primitive ops of each device as
// one more profile. Counts the ops, composites expanded.
class DeviceActivity {
 public:
  DeviceActivity(const TrainingWorkload& workload, const SimulationResult& result)
      : graph_(workload.graph), cost_model_(*workload.cost_model), runs_(graph_.device_count()) {
    std::vector<std::vector<ActivityProfile::Event>> primitive(graph_.device_count());
    for (std::size_t i = 0; i < graph_.op_count(); ++i) {
      const OpId op(static_cast<OpId::value_type>(i));
      if (const CompositeId composite = graph_.op_composite(op); composite.valid()) {
        add_composite(composite, result.start(op), *result.composite_schedules[composite.value()]);
        continue;
      }
      ++op_count_;
      add_op_events(primitive[graph_.op_device(op).value()],
                    {&graph_, op, graph_.op_stream(op), result.start(op), result.end(op)}, 0, cost_model_);
    }
    for (std::size_t d = 0; d < graph_.device_count(); ++d) {
      if (primitive[d].empty()) continue;
      primitive_.push_back(std::make_unique<ActivityProfile>(std::move(primitive[d])));
      runs_[d].push_back({0, primitive_.back().get()});
    }
  }

  const std::vector<ActivityRun>& runs(DeviceId device) const { return runs_[device.value()]; }
  std::size_t op_count() const { return op_count_; }

 private:
  struct Profiles {
    std::vector<ActivityProfile> by_device;  // per template device
    std::size_t op_count = 0;
  };

  void add_composite(CompositeId composite, TimeNs start, const TemplateSchedule& schedule) {
    const Subgraph& subgraph = graph_.subgraph(graph_.composite(composite).subgraph);
    const Profiles& profiles = profiles_of(subgraph, schedule);
    op_count_ += profiles.op_count;
    const TimeNs origin = start - schedule.earliest_start;
    const auto streams = graph_.composite_streams(composite);
    const Graph& inner = subgraph.graph();
    for (std::size_t d = 0; d < profiles.by_device.size(); ++d) {
      if (profiles.by_device[d].size() == 0) continue;
      for (std::size_t s = 0; s < streams.size(); ++s) {
        if (inner.stream(StreamId(static_cast<StreamId::value_type>(s))).device.value() != d) continue;
        runs_[graph_.stream(streams[s]).device.value()].push_back({origin, &profiles.by_device[d]});
        break;
      }
    }
  }

  const Profiles& profiles_of(const Subgraph& subgraph, const TemplateSchedule& schedule) {
    const auto key = std::make_pair(&subgraph, &schedule);
    if (auto it = profiles_.find(key); it != profiles_.end()) return it->second;
    const Graph& inner = subgraph.graph();
    std::vector<std::vector<ActivityProfile::Event>> events(inner.device_count());
    Profiles profiles;
    for_each_template_op(subgraph, schedule, [&](const ExpandedOp& op) {
      ++profiles.op_count;
      add_op_events(events[inner.stream(op.stream).device.value()], op, 0, cost_model_);
    });
    for (auto& device_events : events) profiles.by_device.emplace_back(std::move(device_events));
    return profiles_.emplace(key, std::move(profiles)).first->second;
  }

  const Graph& graph_;
  const ClusterCostModel& cost_model_;
  std::vector<std::vector<ActivityRun>> runs_;  // per device
  std::map<std::pair<const Subgraph*, const TemplateSchedule*>, Profiles> profiles_;
  std::vector<std::unique_ptr<ActivityProfile>> primitive_;
  std::size_t op_count_ = 0;
};

// Time split of one rank, from the ops on its device and on its links.
void account_time(const SimulationResult& result, const DeviceActivity& activity, const SimulatedRank& rank,
                  StageReport& out) {
  std::vector<ActivityRun> runs = activity.runs(rank.device);
  for (DeviceId link : rank.links) {
    const auto& link_runs = activity.runs(link);
    runs.insert(runs.end(), link_runs.begin(), link_runs.end());
  }
  const TimeSplit split = account_rank_time(runs);
  out.compute_s = split.compute_s();
  double exposed = 0.0;
  for (std::size_t k = 0; k < kCommGroupKindCount; ++k) {
    out.exposed_comm_s[k] = split.exposed_s(k);
    exposed += out.exposed_comm_s[k];
  }
  const double iteration = static_cast<double>(result.makespan) / kNsPerSecond;
  out.bubble_s = std::max(0.0, iteration - out.compute_s - exposed);
}

std::optional<StragglerSummary> summarize_stragglers(const ClusterSpec& cluster, const TrainingWorkload& workload) {
  if (!cluster.stragglers) return std::nullopt;
  const Stragglers& parts = *cluster.stragglers;
  StragglerSummary summary;
  summary.slow_gpus = parts.slow_gpus().size();
  summary.slow_nics = parts.slow_nics().size();
  summary.slow_nvlinks = parts.slow_nvlinks().size();
  for (const SimulatedRank& rank : workload.ranks) {
    if (rank.pace_setter < 0 || rank.speed >= summary.speed) continue;
    summary.speed = rank.speed;
    summary.gpu = rank.pace_setter;
    summary.rank_label = workload.graph.device(rank.device).name;
  }
  if (!parts.slow_nics().empty()) std::tie(summary.nic_node, summary.nic_speed) = parts.slow_nics().front();
  if (!parts.slow_nvlinks().empty()) std::tie(summary.nvlink_node, summary.nvlink_speed) = parts.slow_nvlinks().front();
  return summary;
}

}  // namespace

double uniform_iteration_tokens(const TrainingScenario& scenario) {
  const TrainingSpec& t = scenario.training;
  return static_cast<double>(t.global_batch) *
         static_cast<double>(module_tokens(scenario.model.modules.back(), t.sample()));
}

TrainingReport make_training_report(const TrainingScenario& scenario, const TrainingWorkload& workload,
                                    const SimulationResult& result) {
  TrainingReport report;
  const Graph& graph = workload.graph;
  report.iteration_time_s = static_cast<double>(result.makespan) / kNsPerSecond;
  const TrainingSpec& t = scenario.training;
  // Tokens count those of the module with the loss (the backbone): a VLM's sequence, a T2V
  // model's video; with per-sample data, before padding.
  const ModuleSpec& loss_module = scenario.model.modules.back();
  if (const auto& shapes = workload.shapes) {
    DataSummary data;
    data.dataset = scenario.data->dataset ? scenario.data->dataset->name : scenario.data->samples_file;
    data.packed = scenario.data->pack;
    data.samples = shapes->samples;
    const SampleShape total = shapes->total();
    data.sample_tokens = total.seq_len;
    data.images = total.images;
    data.frames = total.frames;
    data.video_seconds = total.video_seconds;
    data.audio_seconds = total.audio_seconds;
    for (const SampleShape& shape : shapes->shapes) data.padded_tokens += shape.seq_len * t.micro_batch;
    const std::vector<SampleShape> distinct = shapes->distinct();  // ordered by sequence length first
    data.shortest_microbatch = distinct.front().seq_len;
    data.longest_microbatch = distinct.back().seq_len;
    data.distinct_shapes = distinct.size();
    double tokens = 0.0;
    for (const SampleShape& own : shapes->own) tokens += static_cast<double>(module_tokens(loss_module, own));
    report.tokens_per_s = tokens / report.iteration_time_s;
    report.samples_per_s = static_cast<double>(data.samples) / report.iteration_time_s;
    report.data = data;
  } else {
    report.tokens_per_s = uniform_iteration_tokens(scenario) / report.iteration_time_s;
    report.samples_per_s = static_cast<double>(t.global_batch) / report.iteration_time_s;
  }
  report.gpus = scenario.parallel.world_size();
  report.model_flops_per_iteration = workload.model_flops_per_iteration;
  report.tflops_per_gpu =
      report.model_flops_per_iteration / report.iteration_time_s / static_cast<double>(report.gpus) / 1e12;
  report.peak_tflops = scenario.cluster.mean_peak(scenario.training.dtype, report.gpus) / 1e12;
  report.mfu = report.tflops_per_gpu / report.peak_tflops;
  const MultimodalModel model(scenario.model);
  report.parameters = model.parameter_count();
  report.trainable_parameters = model.trainable_parameter_count();
  report.microbatches = workload.microbatches;
  report.simulated_ranks = workload.ranks.size();
  report.folded = workload.folded;
  report.per_replica = workload.per_replica;

  const DeviceActivity activity(workload, result);
  report.simulated_ops = activity.op_count();
  // Each stage's time split is its busiest rank's, the one with the most time in kernels (ranks
  // differ when replicas have their own data); its peak memory the highest of its ranks'.
  auto kernel_time = [&](const SimulatedRank& rank) {
    const auto& busy = result.devices[rank.device.value()].busy_by_category;
    return busy[static_cast<std::size_t>(OpCategory::compute)] + busy[static_cast<std::size_t>(OpCategory::memory)];
  };
  std::vector<const SimulatedRank*> busiest;
  for (const SimulatedRank& rank : workload.ranks) {
    const auto stage = static_cast<std::size_t>(rank.coordinates.pp);
    if (stage >= busiest.size()) busiest.resize(stage + 1, nullptr);
    if (busiest[stage] == nullptr || kernel_time(rank) > kernel_time(*busiest[stage])) busiest[stage] = &rank;
  }
  for (const SimulatedRank* rank : busiest) {
    StageReport entry;
    entry.stage = rank->coordinates.pp;
    entry.rank_label = graph.device(rank->device).name;
    entry.static_memory = rank->static_memory;
    entry.memory_capacity = result.devices[rank->device.value()].memory_capacity;
    entry.speed = rank->speed;
    account_time(result, activity, *rank, entry);
    // The only host ops of a training graph with a duration are the framework's (barriers take none).
    const auto& busy = result.devices[rank->device.value()].busy_by_category;
    entry.framework_s = static_cast<double>(busy[static_cast<std::size_t>(OpCategory::host)]) / kNsPerSecond;
    report.stages.push_back(entry);
  }
  for (const SimulatedRank& rank : workload.ranks) {
    const DeviceResult& device = result.devices[rank.device.value()];
    StageReport& entry = report.stages[static_cast<std::size_t>(rank.coordinates.pp)];
    entry.peak_memory = std::max(entry.peak_memory, device.peak_memory);
    entry.activation_peak = entry.peak_memory - entry.static_memory.total();
    entry.oom = entry.oom || device.oom;
    report.oom = report.oom || device.oom;
  }
  report.stragglers = summarize_stragglers(scenario.cluster, workload);
  return report;
}

}  // namespace weft
