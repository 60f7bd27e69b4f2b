#include "simulator/planner/plan_enumeration.hpp"

#include <fmt/format.h>

namespace weft {

std::vector<int> balanced_stage_layers(int layers, int groups) {
  std::vector<int> out(static_cast<std::size_t>(groups), layers / groups);
  int extra = layers % groups;
  // Middle stages first, then the last, then the first.
  for (int g = 1; g + 1 < groups && extra > 0; ++g, --extra) ++out[static_cast<std::size_t>(g)];
  if (extra > 0 && groups > 1) ++out.back(), --extra;
  if (extra > 0) ++out.front();
  return out;
}

std::string plan_label(const TrainingScenario& s) {
  const ParallelPlan& p = s.parallel;
  return fmt::format("tp{} cp{} pp{} dp{} vpp{} mb{}{} zero{} {} recompute={}", p.tp, p.cp, p.pp, p.dp, p.vpp,
                     s.training.micro_batch, p.sequence_parallel && p.tp > 1 ? " sp" : "", p.zero,
                     kPipelineScheduleNames.name(p.schedule), kRecomputePolicyNames.name(p.recompute));
}

PlanEnumeration enumerate_plans(const TrainingScenario& base, const SweepGrid& grid, int gpus) {
  PlanEnumeration out;
  LayerTimesByContext layer_times;  // the plans' layers, priced once per shard context
  auto add = [&](TrainingScenario plan, std::string rule) {
    if (rule.empty()) {
      ++out.valid;
    } else {
      ++out.invalid;
      ++out.invalid_by_reason[rule];
    }
    out.plans.push_back({std::move(plan), std::move(rule)});
  };
  for (int tp : grid.tp) {
    for (bool sp : grid.sequence_parallel) {
      // With one TP rank, sequence parallelism changes nothing: one plan, not two.
      if (tp == 1 && sp != grid.sequence_parallel.front()) continue;
      for (int pp : grid.pp) {
        for (int cp : grid.cp) {
          for (PipelineSchedule schedule : grid.schedule) {
            for (int vpp : grid.vpp) {
              const bool chunks_fit = schedule == PipelineSchedule::interleaved     ? vpp > 1
                                      : schedule == PipelineSchedule::encoder_first ? vpp == 2
                                                                                    : vpp == 1;
              if (!chunks_fit) continue;
              for (std::int64_t mb : grid.micro_batch) {
                for (RecomputePolicy recompute : grid.recompute) {
                  for (int zero : grid.zero) {
                    TrainingScenario plan = base;
                    plan.cluster.gpus = gpus;
                    ParallelPlan& p = plan.parallel;
                    p = ParallelPlan{};
                    p.tp = tp;
                    p.cp = cp;
                    p.pp = pp;
                    p.vpp = vpp;
                    p.sequence_parallel = sp && tp > 1;
                    p.zero = zero;
                    p.schedule = schedule;
                    p.recompute = recompute;
                    p.cp_algorithm = base.parallel.cp_algorithm;
                    plan.training.micro_batch = mb;
                    const std::int64_t model_parallel = std::int64_t{tp} * pp * cp;
                    if (gpus % model_parallel != 0) {
                      p.dp = 0;
                      add(std::move(plan), "tp x pp x cp does not divide the GPU count");
                      continue;
                    }
                    p.dp = static_cast<int>(gpus / model_parallel);
                    pad_vocabulary(plan);
                    const int groups = pp * vpp;
                    if (groups > base.model.layers()) {
                      add(std::move(plan), "more pipeline chunks than layers");
                      continue;
                    }
                    // Stragglers and mixed GPU types: stages on slower GPUs get fewer layers
                    // (docs/stragglers.md).
                    const bool uneven_gpus = base.cluster.stragglers || !base.cluster.node_groups.empty();
                    const bool balance_time = uneven_gpus && groups > 1;
                    if (!balance_time && base.model.layers() % groups != 0) {
                      p.stage_layers = balanced_stage_layers(base.model.layers(), groups);
                    }
                    if (balance_time) p.partition = ParallelPlan::Partition::time;
                    std::string rule;
                    try {
                      if (balance_time) derive_stage_layers(plan, &layer_times);
                      validate_training_scenario(plan);
                    } catch (const InvalidPlan& error) {
                      rule = error.rule();
                    }
                    add(std::move(plan), std::move(rule));
                  }
                }
              }
            }
          }
        }
      }
    }
  }
  return out;
}

}  // namespace weft
