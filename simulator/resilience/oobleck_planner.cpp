#include "simulator/resilience/oobleck_planner.hpp"

#include <algorithm>
#include <limits>
#include <numeric>
#include <string>

#include "simulator/resilience/layout_simulation.hpp"

namespace weft {
namespace {

// The paper plans with N_b = 4 S' microbatches (§2.4.1.2); the second simulation doubles them.
constexpr std::int64_t kPlanningMicrobatchesPerStage = 4;
// The minimal set, for thousands of nodes, fits its templates with S and 2 S: there each
// pipeline's share of the batch is about S (2,048 microbatches over 32 pipelines of 64 stages),
// and the simulations cost a quarter as much.
constexpr std::int64_t kAtScaleMicrobatchesPerStage = 1;

}  // namespace

OobleckPlanner::OobleckPlanner(const TrainingScenario& scenario, int nodes, int f, TemplateSet set)
    : f_(f), set_(set), gpus_per_node_(scenario.cluster.gpus_per_node) {
  if (scenario.model.multimodal() || scenario.data) {
    throw InputError("oobleck: plans models of one module on uniform batches only");
  }
  const ParallelPlan& plan = scenario.parallel;
  const int stage_gpus = plan.tp * plan.cp;
  if (gpus_per_node_ % stage_gpus != 0) {
    throw InputError("oobleck: a stage lies within one node, so TP x CP (" + std::to_string(stage_gpus) +
                     ") must divide the node's " + std::to_string(gpus_per_node_) + " GPUs");
  }
  const int stages_per_node = gpus_per_node_ / stage_gpus;
  const int most_nodes = scenario.model.layers() / stages_per_node;
  microbatches_ = scenario.training.global_batch / scenario.training.micro_batch;
  // §2.4.1.1: n0 is the fewest nodes whose pipeline fits; templates run from n0 to N − f·n0 (and
  // no further than one stage a layer).
  // The fewest nodes that fit, found in order: fitting is not monotone in the node count (the
  // first stage's layers times the microbatches it holds in flight jumps as the split rounds).
  // S microbatches show a pipeline's peak memory: 1F1B holds at most S in flight.
  for (int n = 1; n <= most_nodes && n0_ == 0; ++n) {
    const int stages = n * stages_per_node;
    if (!simulate_layout(scenario, stages, 1, stages).oom) n0_ = n;
  }
  if (n0_ == 0) throw InputError("oobleck: no pipeline of whole nodes holds the model in memory");
  if (nodes < (f + 1) * n0_) {
    throw InputError("oobleck: " + std::to_string(f + 1) + " pipelines (fault tolerance " + std::to_string(f) +
                     ") of at least " + std::to_string(n0_) + " nodes each need more than the job's " +
                     std::to_string(nodes) + " nodes");
  }
  double parameters = 0.0;
  for (int n : template_node_counts(n0_, std::min(nodes, most_nodes + f * n0_), f, set)) {
    if (n > most_nodes) break;
    const int stages = n * stages_per_node;
    const std::int64_t planned =
        (set == TemplateSet::all ? kPlanningMicrobatchesPerStage : kAtScaleMicrobatchesPerStage) * stages;
    const LayoutRun once = simulate_layout(scenario, stages, 1, planned);
    const LayoutRun twice = simulate_layout(scenario, stages, 1, 2 * planned);
    const double per_microbatch = (twice.iteration_s - once.iteration_s) / static_cast<double>(planned);
    templates_.push_back({n, stages, once.iteration_s - per_microbatch * static_cast<double>(planned), per_microbatch});
    parameters = static_cast<double>(once.parameters);
  }
  gradient_bytes_ = parameters * static_cast<double>(scenario.stack.gradient_bytes(scenario.training.dtype));
  network_bytes_per_s_ = scenario.cluster.network_bandwidth_per_gpu() * scenario.cluster.nic_efficiency;
}

double OobleckPlanner::sync_s(int pipelines, int smallest_nodes) const {
  if (pipelines <= 1) return 0.0;
  // A ring all-reduce over the pipelines of each GPU's share of the gradients, the smallest
  // pipeline's GPUs holding the most each.
  const double per_gpu = gradient_bytes_ / (static_cast<double>(smallest_nodes) * gpus_per_node_);
  return 2.0 * (pipelines - 1) / pipelines * per_gpu / network_bytes_per_s_;
}

std::optional<OobleckConfiguration> OobleckPlanner::configure(const TemplateCounts& counts) const {
  std::vector<double> per_microbatch;
  for (const OobleckTemplate& t : templates_) per_microbatch.push_back(t.per_microbatch_s);
  const auto split = distribute_batch(per_microbatch, counts, microbatches_);
  if (!split) return std::nullopt;
  OobleckConfiguration out;
  double slowest = 0.0;
  int pipelines = 0;
  int smallest = std::numeric_limits<int>::max();
  for (std::size_t j = templates_.size(); j-- > 0;) {
    for (int copy = 0; copy < counts[j]; ++copy) {
      out.pipelines.push_back(templates_[j].nodes);
      out.microbatches.push_back((*split)[j]);
    }
    if (counts[j] == 0) continue;
    slowest = std::max(slowest, templates_[j].fixed_s + static_cast<double>((*split)[j]) * per_microbatch[j]);
    pipelines += counts[j];
    smallest = std::min(smallest, templates_[j].nodes);
  }
  out.iteration_s = slowest + sync_s(pipelines, smallest);
  return out;
}

const std::optional<OobleckConfiguration>& OobleckPlanner::best(int nodes) {
  if (auto found = best_.find(nodes); found != best_.end()) return found->second;
  std::vector<int> node_counts;
  for (const OobleckTemplate& t : templates_) node_counts.push_back(t.nodes);
  std::optional<OobleckConfiguration> best;
  if (nodes >= (f_ + 1) * n0_) {
    // Every combination's continuous optimum (every pipeline ending at once, fractional
    // microbatches) is a lower bound of its iteration: combinations are tried best bound first,
    // until no bound can beat the best found.
    std::vector<std::pair<double, TemplateCounts>> bounded;
    for (TemplateCounts& counts : set_ == TemplateSet::all ? feasible_instantiations(node_counts, nodes, f_)
                                                           : two_template_instantiations(node_counts, nodes, f_)) {
      double rate = 0.0;
      double fixed = 0.0;
      int pipelines = 0;
      int smallest = std::numeric_limits<int>::max();
      for (std::size_t j = 0; j < counts.size(); ++j) {
        if (counts[j] == 0) continue;
        rate += counts[j] / templates_[j].per_microbatch_s;
        fixed += counts[j] * templates_[j].fixed_s / templates_[j].per_microbatch_s;
        pipelines += counts[j];
        smallest = std::min(smallest, templates_[j].nodes);
      }
      bounded.emplace_back((static_cast<double>(microbatches_) + fixed) / rate + sync_s(pipelines, smallest),
                           std::move(counts));
    }
    std::stable_sort(bounded.begin(), bounded.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    for (const auto& [bound, counts] : bounded) {
      if (best && bound >= best->iteration_s) break;
      auto configuration = configure(counts);
      if (configuration && (!best || configuration->iteration_s < best->iteration_s)) best = std::move(configuration);
    }
  }
  return best_.emplace(nodes, std::move(best)).first->second;
}

const std::optional<OobleckConfiguration>& OobleckPlanner::redistribute(std::vector<int> pipelines) {
  std::sort(pipelines.begin(), pipelines.end(), std::greater<>());
  if (auto found = redistributed_.find(pipelines); found != redistributed_.end()) return found->second;
  std::optional<OobleckConfiguration> out;
  TemplateCounts counts(templates_.size(), 0);
  bool templated = !pipelines.empty();
  for (const int nodes : pipelines) {
    const int index = nodes - n0_;
    templated = templated && index >= 0 && index < static_cast<int>(templates_.size());
    if (templated) ++counts[static_cast<std::size_t>(index)];
  }
  if (templated) out = configure(counts);
  return redistributed_.emplace(std::move(pipelines), std::move(out)).first->second;
}

}  // namespace weft
