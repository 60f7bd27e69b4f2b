#include "simulator/resilience/run_setup.hpp"

#include <map>

#include <fmt/format.h>

#include "simulator/core/units.hpp"
#include "simulator/engine/engine.hpp"
#include "simulator/workload/training_report.hpp"
#include "simulator/workload/training_workload.hpp"

namespace weft {
namespace {

// The rate the job trains at while one GPU of each pipeline stage in turn runs at `speed`: the
// healthy iteration's time over the slowed one's. Ranks follow Megatron's order (the pipeline
// stage varies slowest), so stage k's first GPU is k x GPUs / pp.
std::vector<double> slowed_rates(const TrainingScenario& scenario, double healthy_iteration_s, double speed) {
  std::vector<double> rates;
  const std::int64_t gpus_per_stage = scenario.parallel.world_size() / scenario.parallel.pp;
  for (int stage = 0; stage < scenario.parallel.pp; ++stage) {
    TrainingScenario slowed = scenario;
    Stragglers stragglers = scenario.cluster.stragglers
                                ? *scenario.cluster.stragglers
                                : Stragglers(scenario.cluster.gpus, static_cast<int>(scenario.cluster.gpus_per_node));
    stragglers.slow_gpu(stage * gpus_per_stage, speed);
    stragglers.finish();
    slowed.cluster.stragglers = std::make_shared<const Stragglers>(std::move(stragglers));
    const TrainingWorkload workload = build_training_workload(slowed, {.name_ops = false});
    const TrainingReport report =
        make_training_report(slowed, workload, simulate(workload.graph, *workload.cost_model, SimulationOptions{}));
    rates.push_back(healthy_iteration_s / report.iteration_time_s);
  }
  return rates;
}

}  // namespace

double checkpoint_bytes(const TrainingScenario& scenario, const TrainingReport& report) {
  return static_cast<double>(report.parameters) *
             static_cast<double>(scenario.stack.parameter_bytes(scenario.training.dtype)) +
         static_cast<double>(report.trainable_parameters) *
             static_cast<double>(scenario.stack.optimizer_state_bytes(scenario.training.dtype));
}

RunSetup make_run_setup(const TrainingScenario& scenario, const TrainingReport& report, const ResilienceSpec& spec,
                        int timeline_points) {
  RunSetup setup;
  setup.iteration_s = report.iteration_time_s;
  setup.tokens_per_iteration = report.tokens_per_s * report.iteration_time_s;
  setup.job_gpus = report.gpus;
  const std::int64_t gpus_per_node = scenario.cluster.gpus_per_node;
  setup.job_nodes = (report.gpus + gpus_per_node - 1) / gpus_per_node;
  setup.failures = spec.failures;
  setup.recovery = spec.recovery;
  setup.horizon_s = spec.days * kSecondsPerDay;
  setup.target_tokens = spec.tokens;
  setup.timeline_points = timeline_points;
  const ClusterSpec& cluster = scenario.cluster;
  setup.node_bytes_per_s = cluster.network_bandwidth_per_gpu() * cluster.gpus_per_node * cluster.nic_efficiency;
  const bool reshapes = spec.recovery.kind == RecoveryKind::oobleck || spec.recovery.kind == RecoveryKind::varuna ||
                        spec.recovery.kind == RecoveryKind::bamboo;
  if (reshapes && scenario.parallel.hybrid_sharding()) {
    throw InputError(
        fmt::format("{}: its plans change the data-parallel ranks, which hybrid sharding's fixed shard groups "
                    "(parallel.dp_shard) do not follow; leave dp_shard out",
                    kRecoveryKindNames.name(spec.recovery.kind)));
  }
  if (reshapes && scenario.parallel.per_module_meshes()) {
    throw InputError(
        fmt::format("{}: its plans change the data-parallel ranks of one mesh, not of modules on meshes of their own "
                    "(parallel.modules); leave modules out",
                    kRecoveryKindNames.name(spec.recovery.kind)));
  }
  if (spec.recovery.kind == RecoveryKind::oobleck) {
    setup.oobleck = std::make_shared<OobleckPlanner>(scenario, static_cast<int>(setup.job_nodes),
                                                     spec.recovery.fault_tolerance, spec.recovery.templates);
    const auto& plan = setup.oobleck->best(static_cast<int>(setup.job_nodes));
    if (!plan) throw InputError("oobleck: the global batch does not split over any instantiation of its templates");
    setup.iteration_s = plan->iteration_s;
  }
  if (spec.recovery.kind == RecoveryKind::varuna) {
    setup.varuna = std::make_shared<MorphingPlanner>(scenario, static_cast<int>(setup.job_nodes));
    const auto& layout = setup.varuna->best(static_cast<int>(setup.job_nodes));
    setup.iteration_s = layout->iteration_s;
    setup.tokens_per_iteration *=
        static_cast<double>(layout->samples) / static_cast<double>(scenario.training.global_batch);
  }
  if (spec.recovery.kind == RecoveryKind::bamboo) {
    setup.bamboo = std::make_shared<BambooPlanner>(scenario);
    const int pipelines = static_cast<int>(setup.job_nodes) / setup.bamboo->nodes_per_pipeline();
    const auto rate = setup.bamboo->samples_per_s(pipelines, {});
    if (!rate) throw InputError("bamboo: the scenario's pipelines with redundant computation do not fit in memory");
    const auto samples = static_cast<double>(setup.bamboo->samples(pipelines));
    setup.iteration_s = samples / *rate;
    setup.tokens_per_iteration *= samples / static_cast<double>(scenario.training.global_batch);
  }
  if (!setup.failures.slowdowns.empty()) {
    if (spec.recovery.kind != RecoveryKind::checkpoint_restart) {
      throw InputError(
          fmt::format("failures.slowdowns: apply to the checkpoint-restart policy only; {} changes the "
                      "layout the slowed GPU is in",
                      kRecoveryKindNames.name(spec.recovery.kind)));
    }
    if (scenario.parallel.per_module_meshes()) {
      throw InputError("failures.slowdowns: apply to plans of one mesh, not of modules on meshes of their own");
    }
    // Causes of one speed slow the iteration alike: simulated once.
    std::map<double, std::vector<double>> rates_at_speed;
    for (const SlowdownCause& cause : setup.failures.slowdowns) {
      auto [at, added] = rates_at_speed.try_emplace(cause.speed);
      if (added) at->second = slowed_rates(scenario, setup.iteration_s, cause.speed);
      setup.slowdown_rates.push_back(at->second);
    }
  }
  CheckpointPolicy& checkpoint = setup.recovery.checkpoint;
  if (checkpoint.interval_iterations) {
    checkpoint.interval_s = static_cast<double>(*checkpoint.interval_iterations) * setup.iteration_s;
  }
  const double failures = (setup.failures.rate_per_s(setup.job_nodes + setup.recovery.hot_spare_nodes) +
                           setup.failures.slowdown_rate_per_s(setup.job_nodes)) *
                          setup.horizon_s;
  if (failures > kMaxFailuresPerRun) {
    throw InputError(fmt::format("{}: about {:.3g} {} a run of {:g} days, more than weft simulates (10^7 a run)",
                                 setup.failures.slowdowns.empty() ? "failures.causes" : "failures", failures,
                                 setup.failures.slowdowns.empty() ? "failures" : "failures and slowdowns", spec.days));
  }
  // Each planned stop writes a checkpoint.
  const double planned_stops = setup.failures.planned_rate_per_s(setup.job_nodes) * setup.horizon_s;
  if (planned_stops > kMaxCheckpointsPerRun) {
    throw InputError(
        fmt::format("failures.planned: about {:.3g} planned stops a run of {:g} days, more than weft "
                    "simulates (10^6 a run)",
                    planned_stops, spec.days));
  }
  if (checkpoint.enabled && checkpoint.interval_s &&
      setup.horizon_s / setup.checkpoint_work_s() > kMaxCheckpointsPerRun) {
    throw InputError(
        fmt::format("recovery.checkpoint: a checkpoint every {:g} s makes {:.3g} a run of {:g} days, "
                    "more than weft simulates (10^6 a run)",
                    setup.checkpoint_work_s(), setup.horizon_s / setup.checkpoint_work_s(), spec.days));
  }
  if (checkpoint.enabled && !checkpoint.interval_s && setup.failures.causes.empty()) {
    throw InputError(
        "checkpoint interval auto (interval_minutes, --checkpoint-interval): the search spans Young's "
        "interval, which needs failure causes (a trace alone gives no rate): give an interval");
  }
  return setup;
}

}  // namespace weft
