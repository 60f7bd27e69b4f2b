#include "simulator/resilience/layout_simulation.hpp"

#include "simulator/engine/engine.hpp"
#include "simulator/planner/plan_enumeration.hpp"
#include "simulator/workload/training_report.hpp"
#include "simulator/workload/training_workload.hpp"

namespace weft {

LayoutRun simulate_layout(const TrainingScenario& base, int pp, int dp, std::int64_t microbatches,
                          const std::vector<int>& stage_layers) {
  TrainingScenario scenario = base;
  ParallelPlan& plan = scenario.parallel;
  plan.pp = pp;
  plan.dp = dp;
  plan.vpp = 1;
  plan.schedule = PipelineSchedule::one_f_one_b;
  plan.partition = ParallelPlan::Partition::given;
  plan.stage_layers = stage_layers;
  const int layers = base.model.layers();
  if (stage_layers.empty() && layers % pp != 0) plan.stage_layers = balanced_stage_layers(layers, pp);
  scenario.cluster.gpus = static_cast<int>(plan.world_size());
  scenario.training.global_batch = microbatches * dp * base.training.micro_batch;
  pad_vocabulary(scenario);
  validate_training_scenario(scenario);
  const TrainingWorkload workload = build_training_workload(scenario, {.name_ops = false});
  const SimulationResult result = simulate(workload.graph, *workload.cost_model, SimulationOptions{});
  const TrainingReport report = make_training_report(scenario, workload, result);
  return {report.iteration_time_s, report.oom, report.parameters};
}

}  // namespace weft
