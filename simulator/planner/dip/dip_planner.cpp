#include "simulator/planner/dip/dip_planner.hpp"

#include <algorithm>
#include <array>
#include <chrono>
#include <optional>
#include <string>

#include "simulator/core/checked_math.hpp"
#include "simulator/core/format_units.hpp"
#include "simulator/core/input_error.hpp"
#include "simulator/engine/engine.hpp"
#include "simulator/planner/dip/dip_plan_simulation.hpp"
#include "simulator/workload/pipeline_schedule.hpp"
#include "simulator/workload/training_workload.hpp"

namespace weft::dip {
namespace {

void check_plannable(const TrainingScenario& scenario) {
  const ParallelPlan& p = scenario.parallel;
  if (p.cp != 1) throw InputError("parallel.cp: the planner splits sequences whole; expected 1");
  if (p.per_module_meshes()) throw InputError(std::string(kOneMesh));
  if (splits_weight_gradients(p.schedule))
    throw InputError("parallel.schedule: " + std::string(kPipelineScheduleNames.name(p.schedule)) +
                     " splits weight passes, which the stage model does not; the baseline must be gpipe, 1f1b, "
                     "interleaved or encoder-first");
}

// Each DP replica's microbatches: drawn from the data, or one replica's all alike.
std::vector<std::vector<SampleShape>> replica_shapes(const TrainingScenario& scenario) {
  const int microbatches = checked_int(scenario.microbatches(), "microbatches per pipeline");
  const std::optional<MicrobatchShapes> drawn = scenario.microbatch_shapes();
  if (!drawn) return {std::vector<SampleShape>(static_cast<std::size_t>(microbatches), scenario.training.sample())};
  std::vector<std::vector<SampleShape>> replicas(static_cast<std::size_t>(drawn->replicas));
  for (int r = 0; r < drawn->replicas; ++r) {
    for (int mb = 0; mb < microbatches; ++mb) replicas[static_cast<std::size_t>(r)].push_back(drawn->at(r, mb));
  }
  return replicas;
}

// Each rank's stages in the order the scenario's schedule runs them (build_megatron_flows' stages:
// per microbatch, the forward stage of each virtual stage, then the backward ones from the last).
std::vector<std::vector<std::size_t>> megatron_orders(const TrainingScenario& scenario, int microbatches) {
  const ParallelPlan& p = scenario.parallel;
  const auto virtual_stages = static_cast<std::size_t>(p.pp) * static_cast<std::size_t>(p.vpp);
  const StageGraph graph = scenario.stage_graph();
  std::vector<std::vector<std::size_t>> orders(static_cast<std::size_t>(p.pp));
  for (int rank = 0; rank < p.pp; ++rank) {
    for (const PipelineAction& action :
         pipeline_actions(p.schedule, graph.schedule_position(rank), p.pp, p.vpp, microbatches)) {
      const auto v = static_cast<std::size_t>(action.chunk * p.pp + rank);
      const std::size_t first = static_cast<std::size_t>(action.microbatch) * 2 * virtual_stages;
      orders[static_cast<std::size_t>(rank)].push_back(
          first + (action.kind == PassKind::forward ? v : 2 * virtual_stages - 1 - v));
    }
  }
  return orders;
}

ScheduleOutcome outcome(std::string name, const StageFlows& flows, const StageSchedule& schedule) {
  ScheduleOutcome out;
  out.name = std::move(name);
  out.iteration = schedule.makespan;
  out.busy_share = schedule.makespan == 0
                       ? 1.0
                       : static_cast<double>(flows.busy()) /
                             (static_cast<double>(flows.ranks) * static_cast<double>(schedule.makespan));
  out.peak_activations = *std::max_element(schedule.peak_memory.begin(), schedule.peak_memory.end());
  std::vector<TimeNs> busy(static_cast<std::size_t>(flows.ranks), 0);
  for (const PipelineStage& stage : flows.stages) busy[static_cast<std::size_t>(stage.rank)] += stage.duration;
  out.busiest_rank = *std::max_element(busy.begin(), busy.end());
  return out;
}

// What each pipeline rank keeps for the whole iteration (parameters, gradients, optimizer states,
// overhead), from the layers placed on it.
class HeldLayers {
 public:
  HeldLayers(const TrainingScenario& scenario, LayerCosts& costs)
      : scenario_(scenario),
        costs_(costs),
        parameters_(static_cast<std::size_t>(scenario.parallel.pp), 0),
        trained_(parameters_.size(), 0) {}

  void place(int rank, int first, int end) {
    for (int layer = first; layer < end; ++layer) {
      parameters_[static_cast<std::size_t>(rank)] += costs_.at(layer, kOneOfEach).parameters;
      trained_[static_cast<std::size_t>(rank)] += costs_.at(layer, kOneOfEach).trained;
    }
  }
  Bytes static_memory(int rank) const {
    const auto r = static_cast<std::size_t>(rank);
    return rank_static_memory(scenario_, parameters_[r], trained_[r], rank).total();
  }

 private:
  const TrainingScenario& scenario_;
  LayerCosts& costs_;
  std::vector<std::int64_t> parameters_;
  std::vector<std::int64_t> trained_;
};

// The most any rank holds for the whole iteration with the modules' chunks placed as partitioned.
Bytes largest_static_memory(const TrainingScenario& scenario, std::span<const ModuleSegments> modules,
                            LayerCosts& costs) {
  const int pp = scenario.parallel.pp;
  HeldLayers held(scenario, costs);
  for (const ModuleSegments& segments : modules) {
    for (int chunk = 0; chunk < static_cast<int>(segments.chunk_layers.size()); ++chunk) {
      const int first = segments.chunk_first_layer(chunk);
      held.place(chunk % pp, first, first + segments.chunk_layers[static_cast<std::size_t>(chunk)]);
    }
  }
  Bytes most = 0;
  for (int rank = 0; rank < pp; ++rank) most = std::max(most, held.static_memory(rank));
  return most;
}

// Every stage's layers under one policy.
std::vector<std::vector<LayerPolicy>> uniform_policy(const StageFlows& flows, LayerPolicy policy) {
  std::vector<std::vector<LayerPolicy>> out(flows.stages.size());
  for (std::size_t i = 0; i < flows.stages.size(); ++i)
    out[i].assign(static_cast<std::size_t>(flows.work[i].end_layer - flows.work[i].first_layer), policy);
  return out;
}

StageSchedule interleave(const StageFlows& flows, Bytes limit, std::span<const int> group_priorities) {
  const std::vector<int> priorities = stage_priorities(flows, group_priorities);
  return interleave_stages(flows.stages, flows.ranks, limit, priorities);
}

// A stage pair's tuning candidates (§6.3) over keep / selective / full recompute of its layers:
// they depend on its layers and shape, not on the schedule, so they are made once per batch.
struct PairCandidates {
  std::size_t backward = 0;  // the pair's backward stage; it frees the forward one
  std::vector<TuningCandidate> candidates;
};
constexpr std::array kPolicies{LayerPolicy::keep, LayerPolicy::selective, LayerPolicy::full};

std::vector<PairCandidates> tuning_candidates(const StageFlows& flows, LayerCosts& costs, int k) {
  std::vector<PairCandidates> pairs;
  for (std::size_t b = 0; b < flows.stages.size(); ++b) {
    if (flows.stages[b].frees == PipelineStage::kNone) continue;
    const StageWork& work = flows.work[flows.stages[b].frees];
    std::vector<std::vector<LayerOption>> layers;
    for (int layer = work.first_layer; layer < work.end_layer; ++layer) {
      const LayerCost& cost = costs.in_stage(layer, work.shape);
      std::vector<LayerOption>& options_of_layer = layers.emplace_back();
      for (LayerPolicy policy : kPolicies) options_of_layer.push_back({cost.latency(policy), cost.memory(policy)});
    }
    pairs.push_back({b, pair_candidates(layers, k)});
  }
  return pairs;
}

// A schedule after layer tuning: CBC picks one candidate per pair under the limit at the pairs'
// places in `schedule`; the stages take the chosen durations and bytes and keep their order.
// When every pair keeps the durations and bytes it had, `stages` stays empty and the schedule is
// the one given.
struct TunedSchedule {
  std::vector<PipelineStage> stages;
  std::vector<int> choice;  // per pair, its candidate
  StageSchedule schedule;
};

TunedSchedule tune(const StageFlows& flows, const StageSchedule& schedule, std::span<const PairCandidates> pairs,
                   Bytes limit) {
  std::vector<StagePair> placed;
  for (const PairCandidates& pair : pairs) {
    const std::size_t f = flows.stages[pair.backward].frees;
    placed.push_back({flows.stages[f].rank, schedule.start[f], schedule.end[pair.backward], pair.candidates});
  }
  TunedSchedule tuned;
  tuned.choice = solve_tuning(placed, limit).candidate;
  auto chosen = [&](std::size_t i) -> const TuningCandidate& {
    return pairs[i].candidates[static_cast<std::size_t>(tuned.choice[i])];
  };
  auto changes = [&](std::size_t i) {
    const PipelineStage& b = flows.stages[pairs[i].backward];
    const PipelineStage& f = flows.stages[b.frees];
    return chosen(i).latency - f.duration != b.duration || chosen(i).memory != f.memory;
  };
  bool changed = false;
  for (std::size_t i = 0; i < pairs.size() && !changed; ++i) changed = changes(i);
  if (!changed) {
    tuned.schedule = schedule;
    return tuned;
  }
  tuned.stages = flows.stages;
  for (std::size_t i = 0; i < pairs.size(); ++i) {
    const std::size_t b = pairs[i].backward;
    const std::size_t f = tuned.stages[b].frees;
    tuned.stages[b].duration = chosen(i).latency - tuned.stages[f].duration;
    tuned.stages[f].memory = chosen(i).memory;
  }
  tuned.schedule = time_stage_orders(tuned.stages, schedule.order);
  return tuned;
}

// Algorithm 1 over the flows' segment groups. Each rollout's ranking is interleaved and tuned, as
// §6.1 scores it; the score is the flows' busy time (as built) over the tuned schedule's rank-time,
// the non-bubble share when tuning changes nothing, and in every case larger for a faster schedule.
PrioritySearchResult rank_groups(const StageFlows& flows, std::span<const PairCandidates> pairs, Bytes limit,
                                 const DipOptions& options) {
  PrioritySearchOptions search;
  search.rollouts = options.rollouts;
  search.seed = options.seed;
  search.threads = options.threads;
  search.window = options.window;
  search.time_budget_s = options.max_iterations > 0 ? 0.0 : options.time_budget_s;
  search.max_iterations = options.max_iterations > 0 ? options.max_iterations : INT64_MAX;
  search.stop = options.stop;
  const double busy = static_cast<double>(flows.busy());
  auto score = [&](const std::vector<int>& group_priorities) {
    try {
      const TunedSchedule tuned = tune(flows, interleave(flows, limit, group_priorities), pairs, limit);
      const double share = busy / (static_cast<double>(flows.ranks) * static_cast<double>(tuned.schedule.makespan));
      return options.slowest ? 1.0 / share : share;
    } catch (const InputError&) {
      return 0.0;  // this order runs out of memory: no rank can go on
    }
  };
  return search_priorities(static_cast<int>(flows.follows.size()), flows.follows, score, search);
}

// Applies a tuning of the plan's schedule: the stages' durations and bytes, their layer policies,
// and the re-timed schedule.
void apply_tuning(DipPlan& plan, std::span<const PairCandidates> pairs, TunedSchedule tuned) {
  for (std::size_t i = 0; i < pairs.size(); ++i) {
    const TuningCandidate& chosen = pairs[i].candidates[static_cast<std::size_t>(tuned.choice[i])];
    std::vector<LayerPolicy> policy;
    for (int option : chosen.options) policy.push_back(kPolicies[static_cast<std::size_t>(option)]);
    plan.policy[pairs[i].backward] = policy;
    plan.policy[plan.flows.stages[pairs[i].backward].frees] = std::move(policy);
  }
  if (!tuned.stages.empty()) plan.flows.stages = std::move(tuned.stages);
  plan.schedule = std::move(tuned.schedule);
}

// A Megatron schedule of the batch on the stage model: a baseline the plan must beat.
struct Baseline {
  StageFlows flows;
  StageSchedule schedule;
  ScheduleOutcome outcome;
};

// `scenario`'s partition and schedule for `shapes` on the stage model.
Baseline time_megatron(const TrainingScenario& scenario, std::string name, LayerCosts& costs,
                       std::span<const LayerPolicy> policy, std::span<const SampleShape> shapes) {
  const int pp = scenario.parallel.pp;
  Baseline out;
  out.flows =
      build_megatron_flows(scenario.layers_per_virtual_stage(), scenario.stage_graph(), shapes, pp, costs, policy);
  out.schedule = time_stage_orders(out.flows.stages, megatron_orders(scenario, static_cast<int>(shapes.size())));
  out.outcome = outcome(std::move(name), out.flows, out.schedule);
  // Each rank holds the layers of its virtual stages (every microbatch's forward stages name them).
  HeldLayers held(scenario, costs);
  for (std::size_t i = 0; i < out.flows.stages.size(); ++i) {
    const StageWork& work = out.flows.work[i];
    if (!out.flows.stages[i].backward && work.microbatch == 0)
      held.place(out.flows.stages[i].rank, work.first_layer, work.end_layer);
  }
  for (int rank = 0; rank < pp; ++rank) {
    out.outcome.most_memory = std::max(
        out.outcome.most_memory, held.static_memory(rank) + out.schedule.peak_memory[static_cast<std::size_t>(rank)]);
  }
  return out;
}

// The scenario under Megatron's interleaved 1F1B, two chunks a rank balanced by parameters, when
// it runs one chunk a rank of a pipeline the modules share and the batch and layers allow two.
std::optional<TrainingScenario> interleaved_variant(const TrainingScenario& scenario) {
  const ParallelPlan& p = scenario.parallel;
  if (p.pp < 2 || p.vpp != 1 || !p.modality_stages.empty()) return std::nullopt;
  TrainingScenario variant = scenario;
  variant.parallel.vpp = 2;
  variant.parallel.schedule = PipelineSchedule::interleaved;
  variant.parallel.partition = ParallelPlan::Partition::parameters;
  try {
    derive_stage_layers(variant);
    validate_training_scenario(variant);
  } catch (const InputError&) {
    return std::nullopt;  // too few layers or microbatches for two chunks a rank
  }
  return variant;
}

// Plans one DP replica's batch of `shapes`.
DipPlan plan_replica(const TrainingScenario& scenario, const DipOptions& options, LayerCosts& costs,
                     std::vector<SampleShape> shapes) {
  const ParallelPlan& p = scenario.parallel;
  DipPlan plan;
  plan.shapes = std::move(shapes);
  const std::vector<LayerPolicy> initial(static_cast<std::size_t>(costs.model().layer_count()), layer_policy(scenario));

  const auto own_name = std::string(kPipelineScheduleNames.name(p.schedule)) + " (the scenario's plan)";
  std::vector<Baseline> baselines;
  baselines.push_back(time_megatron(scenario, own_name, costs, initial, plan.shapes));
  plan.steps.push_back(baselines.front().outcome);
  if (const std::optional<TrainingScenario> interleaved = interleaved_variant(scenario)) {
    baselines.push_back(time_megatron(*interleaved, "interleaved 1F1B, 2 chunks a rank balanced by parameters", costs,
                                      initial, plan.shapes));
    plan.other_baselines.push_back(baselines.back().outcome);
  }
  plan.modules = plan_module_segments(costs, plan.shapes, {p.pp, options.sub_microbatch});
  plan.flows = build_dip_flows(plan.modules, plan.shapes, p.pp, costs, initial);
  plan.static_memory = largest_static_memory(scenario, plan.modules, costs);
  const Bytes capacity = options.memory_limit > 0 ? options.memory_limit : scenario.cluster.gpu.memory_capacity;
  plan.activation_limit = capacity - plan.static_memory;
  if (plan.activation_limit <= 0) {
    throw InputError("memory limit: " + format_bytes(capacity) + " per GPU leaves nothing for activations after " +
                     format_bytes(plan.static_memory) + " of parameters, gradients, optimizer states and overhead");
  }
  const std::vector<int> in_order = default_group_priorities(plan.flows);
  try {
    plan.schedule = interleave(plan.flows, plan.activation_limit, in_order);
  } catch (const InputError& error) {
    throw InputError("memory limit: " + format_bytes(capacity) +
                     " per GPU is too small for this batch: " + error.what());
  }
  plan.group_priorities = in_order;
  plan.steps.push_back(outcome("+ modality-aware partitioner, interleaving", plan.flows, plan.schedule));

  const auto start = std::chrono::steady_clock::now();
  const std::vector<PairCandidates> pairs = tuning_candidates(plan.flows, costs, options.tuning_candidates);
  plan.search = rank_groups(plan.flows, pairs, plan.activation_limit, options);
  plan.search_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  // The search does not start from microbatch order; that order stays unless the search's ranking
  // is faster once tuned (with --slowest: slower): rankings are compared as the search scores them.
  TunedSchedule tuned = tune(plan.flows, plan.schedule, pairs, plan.activation_limit);
  if (plan.search.score > 0.0) {
    StageSchedule searched = interleave(plan.flows, plan.activation_limit, plan.search.priorities);
    TunedSchedule searched_tuned = tune(plan.flows, searched, pairs, plan.activation_limit);
    const TimeNs searched_time = searched_tuned.schedule.makespan;
    const TimeNs in_order_time = tuned.schedule.makespan;
    if (options.slowest ? searched_time > in_order_time : searched_time < in_order_time) {
      plan.group_priorities = plan.search.priorities;
      plan.schedule = std::move(searched);
      plan.searched_ranking = true;
      tuned = std::move(searched_tuned);
    }
  }
  plan.steps.push_back(outcome("+ modality-module-level ranking (MCTS)", plan.flows, plan.schedule));

  plan.policy = uniform_policy(plan.flows, layer_policy(scenario));
  apply_tuning(plan, pairs, std::move(tuned));
  plan.steps.push_back(outcome("+ model layer tuning", plan.flows, plan.schedule));
  // The plan returned is never slower than a baseline that fits the memory limit, on the stage
  // model: the fastest such baseline's schedule replaces DIP's when it is (not with --slowest,
  // which looks for the worst ranking).
  Baseline* fastest = nullptr;
  for (Baseline& baseline : baselines) {
    if (baseline.outcome.most_memory > capacity) continue;
    if (!fastest || baseline.schedule.makespan < fastest->schedule.makespan) fastest = &baseline;
  }
  if (!options.slowest && fastest && fastest->schedule.makespan < plan.schedule.makespan) {
    plan.returned_baseline = fastest->outcome.name;
    plan.flows = std::move(fastest->flows);
    plan.schedule = std::move(fastest->schedule);
    plan.policy = uniform_policy(plan.flows, layer_policy(scenario));
  }
  return plan;
}

}  // namespace

LayerPolicy layer_policy(const TrainingScenario& scenario) {
  if (scenario.parallel.hybrid_sharding()) {
    throw InputError(
        "parallel.dp_shard: the stage model reduces gradients over all of data parallelism, not over hybrid shard "
        "groups; leave it out");
  }
  if (scenario.parallel.recompute_layers.method != LayerRecompute::Method::all) {
    throw InputError(
        "parallel.recompute_layers: the stage model prices one recompute policy for every layer (its layer tuning "
        "picks per layer itself); leave it out");
  }
  if (scenario.per_op_checkpointing()) {
    throw InputError("parallel.recompute: 'selective' under stack '" + scenario.stack.name +
                     "' is per-op checkpointing, which the stage model does not price; expected none or full");
  }
  switch (scenario.parallel.recompute) {
    case RecomputePolicy::none:
      return LayerPolicy::keep;
    case RecomputePolicy::selective:
      return LayerPolicy::selective;
    case RecomputePolicy::full:
      break;
  }
  return LayerPolicy::full;
}

DipPlan plan_dip(const TrainingScenario& scenario, const DipOptions& options) {
  check_plannable(scenario);
  const MultimodalModel model(scenario.model, scenario.parallel.cp_algorithm);
  LayerCosts costs(model, scenario.shard_context(), scenario.cluster, scenario.options.ideal_network,
                   scenario.parallel.dp);
  const bool overlaps_tp = scenario.overlaps_tp_communication() && scenario.parallel.zero < 3;
  costs.set_tp_overlap(overlaps_tp);
  std::vector<std::vector<SampleShape>> replicas = replica_shapes(scenario);
  DipOptions each = options;
  each.time_budget_s = options.time_budget_s / static_cast<double>(replicas.size());
  DipPlan slowest;
  std::vector<ReplicaOutcome> outcomes;
  for (std::size_t r = 0; r < replicas.size(); ++r) {
    DipPlan plan = plan_replica(scenario, each, costs, std::move(replicas[r]));
    plan.replica = static_cast<int>(r);
    outcomes.push_back({plan.replica, plan.steps.front().iteration, plan.schedule.makespan});
    if (r == 0 || plan.schedule.makespan > slowest.schedule.makespan) slowest = std::move(plan);
  }
  slowest.replicas = std::move(outcomes);
  slowest.overlaps_tp = overlaps_tp;
  if (options.stop && options.stop()) return slowest;
  const TrainingWorkload workload = build_training_workload(scenario, {.name_ops = false, .max_ops = options.max_ops});
  slowest.megatron_simulated = simulate(workload.graph, *workload.cost_model).makespan;
  slowest.simulation = std::make_shared<const SimulatedDipPlan>(simulate_dip_plan(scenario, slowest));
  return slowest;
}

}  // namespace weft::dip
