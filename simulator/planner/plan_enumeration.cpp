#include "simulator/planner/plan_enumeration.hpp"

#include <algorithm>
#include <optional>

#include <fmt/format.h>

#include "simulator/planner/mesh_plans.hpp"
#include "simulator/planner/module_stage_splits.hpp"
#include "simulator/workload/modality_stages.hpp"
#include "simulator/workload/module_meshes.hpp"

namespace weft {
namespace {

// The partition a dense plan gets by default (default_grid), which its label leaves out.
bool default_dense_partition(const TrainingScenario& s) {
  return s.parallel.partition ==
         (uneven_gpus(s.cluster) ? ParallelPlan::Partition::time : ParallelPlan::Partition::given);
}

ParallelPlan::Partition plan_partition(StagePartition partition) {
  switch (partition) {
    case StagePartition::even:
      return ParallelPlan::Partition::given;
    case StagePartition::parameters:
      return ParallelPlan::Partition::parameters;
    case StagePartition::time:
      return ParallelPlan::Partition::time;
  }
  return ParallelPlan::Partition::given;
}

// Deals the layers of a plan whose modules share one pipeline to its stages by `partition`.
void partition_shared_pipeline(TrainingScenario& plan, StagePartition partition, LayerTimesByContext& layer_times) {
  ParallelPlan& p = plan.parallel;
  const int groups = p.pp * p.vpp;
  if (p.schedule == PipelineSchedule::encoder_first && plan.model.multimodal()) {
    p.partition = ParallelPlan::Partition::modules;  // encoders on each stage's first chunk, the LLM on its second
  } else if (groups > 1 && partition != StagePartition::even) {
    p.partition = plan_partition(partition);
  } else {
    if (plan.model.layers() % groups != 0) p.stage_layers = balanced_stage_layers(plan.model.layers(), groups);
    return;
  }
  derive_stage_layers(plan, &layer_times);
}

// The plans of one layout whose transformer modules have stages of their own: one per split of
// the stages over the modules (the best balanced one unless every split is asked for).
std::vector<TrainingScenario> modality_plans(const TrainingScenario& layout, StagePartition partition,
                                             ModuleStageSplits wanted, LayerTimesByContext& layer_times) {
  const std::vector<std::vector<int>> splits = module_stage_splits(layout.model, layout.parallel.pp);
  if (splits.empty()) return {};
  TrainingScenario plan = layout;
  ParallelPlan& p = plan.parallel;
  p.partition = plan_partition(partition);
  std::vector<std::int64_t> weights(static_cast<std::size_t>(plan.model.layers()), 1);
  if (partition != StagePartition::even) weights = partition_weights(plan, &layer_times);
  std::vector<TrainingScenario> plans;
  auto add = [&](const std::vector<int>& split) {
    p.modality_stages = split;
    p.stage_layers = partition_within_modules(weights, plan.model, split);
    plans.push_back(plan);
  };
  if (wanted == ModuleStageSplits::balanced) {
    add(most_balanced_split(splits, weights, plan.model));
  } else {
    for (const std::vector<int>& split : splits) add(split);
  }
  return plans;
}

}  // namespace

std::vector<int> balanced_stage_layers(int layers, int groups) {
  std::vector<int> out(static_cast<std::size_t>(groups), layers / groups);
  int extra = layers % groups;
  // Middle stages first, then the last, then the first.
  for (int g = 1; g + 1 < groups && extra > 0; ++g, --extra) ++out[static_cast<std::size_t>(g)];
  if (extra > 0 && groups > 1) ++out.back(), --extra;
  if (extra > 0) ++out.front();
  return out;
}

std::string_view plan_partition_name(const ParallelPlan& p) {
  switch (p.partition) {
    case ParallelPlan::Partition::given:
      return "even";
    case ParallelPlan::Partition::parameters:
      return "parameters";
    case ParallelPlan::Partition::time:
      return "time";
    case ParallelPlan::Partition::modules:
      return "modules";
  }
  return "even";
}

std::string module_stages_text(const TrainingScenario& s) {
  const ParallelPlan& p = s.parallel;
  const auto& modules = s.model.modules;
  std::string text;
  for (const auto& [name, stages] : named_modality_stages(s.model, p.modality_stages)) {
    text += fmt::format("{}{}:{}", text.empty() ? "" : ",", name, stages);
    if (!p.per_module_meshes() || name == modules.back().name) continue;
    const auto module = std::find_if(modules.begin(), modules.end(),
                                     [&module_name = name](const ModuleSpec& m) { return m.name == module_name; });
    const PositionMesh mesh = p.module_meshes[static_cast<std::size_t>(module - modules.begin())];
    text += fmt::format("/tp{}/dp{}", mesh.tp, mesh.dp);
  }
  return text;
}

std::string plan_label(const TrainingScenario& s) {
  const ParallelPlan& p = s.parallel;
  const std::string shard = p.hybrid_sharding() ? fmt::format("/shard{}", p.dp_shard) : "";
  std::string label = fmt::format("tp{} cp{} pp{} dp{} vpp{} mb{}{} zero{}{} {} recompute={}", p.tp, p.cp, p.pp, p.dp,
                                  p.vpp, s.training.micro_batch, p.sequence_parallel && p.tp > 1 ? " sp" : "", p.zero,
                                  shard, kPipelineScheduleNames.name(p.schedule), recompute_name(p.recompute_choice()));
  if (s.model.multimodal()) label += p.modality_stages.empty() ? " shared" : " modality=" + module_stages_text(s);
  const bool staged = p.pp * p.vpp > 1;
  if (staged && (s.model.multimodal() || !default_dense_partition(s)))
    label += " partition=" + std::string(plan_partition_name(p));
  return label;
}

PlanEnumeration enumerate_plans(const TrainingScenario& base, const SweepGrid& grid, int gpus) {
  check_grid(grid, base);
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
  // Validates the plan, once its layers are dealt by `deal` (which may find it invalid too), and
  // the microbatches it draws from per-sample data.
  auto add_checked = [&](TrainingScenario plan, auto deal) {
    std::string rule;
    try {
      deal(plan);
      validate_training_scenario(plan);
      if (plan.data) plan.microbatch_shapes();
    } catch (const InvalidPlan& error) {
      rule = error.rule();
    }
    add(std::move(plan), std::move(rule));
  };
  // The plans of a layout: its modules sharing one pipeline, or on stages of their own.
  auto add_layouts = [&](const TrainingScenario& layout) {
    const ParallelPlan& p = layout.parallel;
    const int groups = p.pp * p.vpp;
    for (StageLayout where : grid.layout) {
      // Modules on stages of their own run gpipe or 1f1b, one chunk per stage.
      const bool chain_schedule = p.schedule == PipelineSchedule::gpipe || p.schedule == PipelineSchedule::one_f_one_b;
      if (where == StageLayout::modality && (!chain_schedule || p.vpp != 1)) continue;
      for (StagePartition partition : grid.partition) {
        // One stage, or the encoder-first schedule's own partition: the partitions give one plan.
        const bool one_partition =
            groups == 1 || (p.schedule == PipelineSchedule::encoder_first && layout.model.multimodal());
        if (one_partition && partition != grid.partition.front()) continue;
        if (where == StageLayout::shared) {
          add_checked(layout, [&](TrainingScenario& plan) { partition_shared_pipeline(plan, partition, layer_times); });
          continue;
        }
        std::vector<TrainingScenario> plans;
        try {
          plans = modality_plans(layout, partition, grid.module_stages, layer_times);
        } catch (const InvalidPlan& error) {
          add(layout, error.rule());
          continue;
        }
        for (TrainingScenario& plan : plans) {
          add_checked(std::move(plan),
                      [](TrainingScenario& modality) { check_modality_plan(modality.parallel, modality.model); });
        }
      }
    }
  };
  // Modules on meshes of their own (mesh_plans.hpp): the modality plans of a plan's axes with
  // each mesh the grid asks for, whether or not tp x pp x cp divides the GPUs (the meshes decide
  // the last module's dp). Splits and partitions are those of the plan's own mesh; modality plans
  // the plan's own mesh cannot have are counted invalid once, by add_layouts.
  auto add_mesh_layouts = [&](TrainingScenario plan) {
    ParallelPlan& p = plan.parallel;
    const bool chain_schedule = p.schedule == PipelineSchedule::gpipe || p.schedule == PipelineSchedule::one_f_one_b;
    if (!chain_schedule || p.vpp != 1 || p.pp > base.model.layers()) return;
    p.dp = 1;  // until mesh_plans derives it
    pad_vocabulary(plan);
    for (StagePartition partition : grid.partition) {
      if (p.pp == 1 && partition != grid.partition.front()) continue;
      std::vector<TrainingScenario> plans;
      try {
        plans = modality_plans(plan, partition, grid.module_stages, layer_times);
      } catch (const InvalidPlan&) {
        continue;
      }
      for (const TrainingScenario& modality : plans) {
        for (PlanCandidate& candidate : mesh_plans(modality, grid, gpus)) {
          if (!candidate.valid()) {
            add(std::move(candidate.scenario), std::move(candidate.invalid_rule));
            continue;
          }
          add_checked(std::move(candidate.scenario), [](TrainingScenario& meshed) {
            check_modality_plan(meshed.parallel, meshed.model);
            check_simulated_meshes(meshed);
          });
        }
      }
    }
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
                for (const RecomputeChoice& recompute : grid.recompute) {
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
                    p.recompute = recompute.policy;
                    p.recompute_layers = recompute.layers;
                    p.cp_algorithm = base.parallel.cp_algorithm;
                    plan.training.micro_batch = mb;
                    if (grid.tries_meshes()) add_mesh_layouts(plan);
                    const std::int64_t model_parallel = std::int64_t{tp} * pp * cp;
                    if (gpus % model_parallel != 0) {
                      p.dp = 0;
                      add(std::move(plan), "tp x pp x cp does not divide the GPU count");
                      continue;
                    }
                    p.dp = static_cast<int>(gpus / model_parallel);
                    pad_vocabulary(plan);
                    if (pp * vpp > base.model.layers()) {
                      add(std::move(plan), "more pipeline chunks than layers");
                      continue;
                    }
                    // A shard group of every data-parallel rank is plain ZeRO: one plan, not two.
                    std::vector<int> shards;
                    for (const int value : grid.dp_shard) {
                      const std::optional<int> shard =
                          value == kNodeShard ? node_shard_dp(base.cluster.gpus_per_node, tp, cp) : value;
                      if (!shard) {
                        add(plan, "tp x cp spans more than a node, or does not divide it, for dp_shard=node");
                        continue;
                      }
                      const int effective = *shard == p.dp ? 0 : *shard;
                      if (std::find(shards.begin(), shards.end(), effective) == shards.end())
                        shards.push_back(effective);
                    }
                    for (const int shard : shards) {
                      TrainingScenario sharded = plan;
                      sharded.parallel.dp_shard = shard;
                      add_layouts(sharded);
                    }
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
