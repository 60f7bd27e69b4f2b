#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "simulator/planner/sweep_grid.hpp"

namespace weft {

// Layers of each of `groups` virtual pipeline stages, as even as possible; the first and last
// hold the fewest, since they also carry the embedding and the output layer.
std::vector<int> balanced_stage_layers(int layers, int groups);

// How the plan's layers were dealt to its stages: "even" (as given, or an even split),
// "parameters", "time" or "modules" (ParallelPlan::Partition).
std::string_view plan_partition_name(const ParallelPlan& plan);

// The stages of each transformer module of a plan under modality parallelism, "vit:1,llm:3",
// with the mesh of each module before the last where modules have meshes of their own
// ("vit:1/tp1/dp4,llm:3"); empty where the modules share one pipeline.
std::string module_stages_text(const TrainingScenario& scenario);

// A short stable description of a plan, used to break ranking ties and to label it:
// "tp8 cp1 pp16 dp128 vpp2 mb1 sp zero1 interleaved recompute=none". A model of several modules
// adds its layout ("shared", or "modality=vit:1,llm:3") and every plan of several stages its
// partition ("partition=time"), except a model of one module's default (even, or time on a
// cluster of uneven GPUs).
std::string plan_label(const TrainingScenario& scenario);

struct PlanCandidate {
  TrainingScenario scenario;
  std::string invalid_rule;  // empty for a valid plan

  bool valid() const { return invalid_rule.empty(); }
};

struct PlanEnumeration {
  std::vector<PlanCandidate> plans;  // in enumeration order
  std::map<std::string, std::int64_t> invalid_by_reason;
  std::int64_t valid = 0;
  std::int64_t invalid = 0;
};

// Every plan of the grid for `gpus` GPUs, with dp = gpus / (tp x pp x cp). Pipeline depths
// that do not divide the layers get a balanced uneven split. Combinations that are the same plan
// are considered once: VPP > 1 only with the interleaved schedule (and interleaved only with
// VPP > 1), sequence parallelism only with TP > 1, hybrid sharding only with a shard group smaller
// than dp. A model of several modules gets the grid's
// layouts and partitions: modules on stages of their own only under gpipe and 1f1b with VPP 1, and
// one plan per split of the stages over the modules (the balanced one, or every one: see
// ModuleStageSplits); one partition where a plan has one stage or runs encoder-first; and, where
// the grid asks for module meshes, the modality plans on them (mesh_plans). Invalid plans are
// counted by the rule they break; check_grid's errors are thrown.
PlanEnumeration enumerate_plans(const TrainingScenario& base, const SweepGrid& grid, int gpus);

}  // namespace weft
