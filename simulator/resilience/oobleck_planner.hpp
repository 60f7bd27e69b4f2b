#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <vector>

#include "simulator/resilience/pipeline_templates.hpp"
#include "simulator/workload/training_scenario.hpp"

namespace weft {

// One of Oobleck's pipeline templates: a single pipeline over `nodes` nodes, whole stages on each
// node (the scenario's TP × CP GPUs a stage), layers split evenly, 1F1B; its iteration takes
// fixed_s + microbatches × per_microbatch_s (from two simulations of it, with 4 and 8 microbatches
// a stage: 1F1B's time grows by the slowest stage's forward and backward per microbatch).
struct OobleckTemplate {
  int nodes = 0;
  int stages = 0;
  double fixed_s = 0.0;
  double per_microbatch_s = 0.0;
};

// Pipelines instantiated from templates and the microbatches each takes.
struct OobleckConfiguration {
  std::vector<int> pipelines;              // node counts, largest first
  std::vector<std::int64_t> microbatches;  // per pipeline
  double iteration_s = 0.0;                // the slowest pipeline, then the gradients' all-reduce across them
};

// Oobleck's planner (papers/002 §2.4–2.5) over weft's simulation of each template.
class OobleckPlanner {
 public:
  // Builds `set`'s templates for `nodes` nodes and fault tolerance `f`: n0 is the fewest nodes
  // whose pipeline fits in memory. Throws InputError when no pipeline fits or a stage cannot lie
  // within one node.
  OobleckPlanner(const TrainingScenario& scenario, int nodes, int f, TemplateSet set = TemplateSet::all);

  int n0() const { return n0_; }
  int f() const { return f_; }
  const std::vector<OobleckTemplate>& templates() const { return templates_; }

  // §2.4.2: the fastest instantiation of every feasible combination of templates on `nodes`
  // nodes (of at most two templates with the minimal set), its batch distributed by Eq. 2.6;
  // nullopt when none (fewer than (f + 1)·n0 nodes, or no split of the global batch). Cached per
  // node count.
  const std::optional<OobleckConfiguration>& best(int nodes);

  // §2.5.2: pipelines of these node counts (each a template's) with the batch redistributed;
  // nullopt when it does not split. Cached.
  const std::optional<OobleckConfiguration>& redistribute(std::vector<int> pipelines);

 private:
  std::optional<OobleckConfiguration> configure(const TemplateCounts& counts) const;
  // The gradients' all-reduce across `pipelines` pipelines, layer by layer at the iteration's end.
  double sync_s(int pipelines, int smallest_nodes) const;

  int f_;
  TemplateSet set_;
  int n0_ = 0;
  int gpus_per_node_;
  std::int64_t microbatches_;
  double gradient_bytes_;
  double network_bytes_per_s_;              // per GPU, across nodes
  std::vector<OobleckTemplate> templates_;  // n0, n0 + 1, ...
  std::map<int, std::optional<OobleckConfiguration>> best_;
  std::map<std::vector<int>, std::optional<OobleckConfiguration>> redistributed_;
};

}  // namespace weft
