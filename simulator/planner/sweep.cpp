#include "simulator/planner/sweep.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <string>

#include <fmt/format.h>
#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>
#include <tbb/task_arena.h>

#include "simulator/core/checked_math.hpp"
#include "simulator/core/input_error.hpp"
#include "simulator/engine/engine.hpp"
#include "simulator/engine/simulation_checkpoint.hpp"
#include "simulator/planner/iteration_bound.hpp"
#include "simulator/planner/memory_estimate.hpp"
#include "simulator/planner/plan_enumeration.hpp"
#include "simulator/workload/graph_size.hpp"
#include "simulator/workload/schedule_reorder.hpp"

namespace weft {
namespace {

// Per shard context, the layers' steps of the plans of a sweep of a model of several modules or
// of per-sample data, whose estimates would otherwise build them per plan (a model of one module
// without data is estimated from one layer).
class LayerStepsByContext {
 public:
  explicit LayerStepsByContext(const TrainingScenario& base) : kept_(base.model.multimodal() || base.data) {}

  // The plan's, with its head sharing the embedding or not; none where not kept.
  const PipelineLayerSteps* operator()(const TrainingScenario& plan, bool shared_head) {
    if (!kept_) return nullptr;
    const auto key = std::make_pair(plan.shard_context(), shared_head);
    auto found = steps_.find(key);
    if (found == steps_.end()) found = steps_.emplace(key, pipeline_layer_steps(plan, shared_head)).first;
    return &found->second;
  }

 private:
  bool kept_;
  std::map<std::pair<ShardContext, bool>, PipelineLayerSteps> steps_;
};

// Drops the plan if its memory lower bound cannot fit; returns whether it may.
bool passes_memory_estimate(PlanOutcome& plan, LayerStepsByContext& layer_steps) {
  // The estimate prices every stage at the plan's tp and dp: not a bound for modules on meshes
  // of their own, which only their simulation sizes.
  if (plan.scenario.parallel.per_module_meshes()) return true;
  plan.stage_memory =
      estimate_stage_memory(plan.scenario, layer_steps(plan.scenario, plan.scenario.model.tied_embeddings()));
  for (std::size_t stage = 0; stage < plan.stage_memory.size(); ++stage) {
    if (plan.stage_memory[stage] > plan.memory_capacity) {
      plan.status = PlanStatus::oom;
      plan.reason = fmt::format("stage {} needs at least {:.1f} GiB (estimated)", stage,
                                static_cast<double>(plan.stage_memory[stage]) / static_cast<double>(kBytesPerGiB));
      return false;
    }
  }
  return true;
}

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

// The time simulate_sweep's threads spend in each phase, in nanoseconds.
struct PhaseTotals {
  std::atomic<std::int64_t> graph{0};
  std::atomic<std::int64_t> engine{0};
  std::atomic<std::int64_t> report{0};

  // Adds the time since `start` to `total`; returns now.
  static Clock::time_point lap(std::atomic<std::int64_t>& total, Clock::time_point start) {
    const Clock::time_point now = Clock::now();
    total += std::chrono::duration_cast<std::chrono::nanoseconds>(now - start).count();
    return now;
  }
};

// The plan's report from its simulated iteration; a stage whose peak exceeds the capacity makes
// the plan out of memory.
void record_simulation(PlanOutcome& plan, const TrainingWorkload& workload, const SimulationResult& result) {
  plan.report = make_training_report(plan.scenario, workload, result);
  plan.uncalibrated_placements = workload.cost_model->placements_without_calibration();
  plan.stage_memory.clear();
  for (const StageReport& stage : plan.report->stages) {
    plan.stage_memory.push_back(stage.peak_memory);
    if (stage.oom && plan.status == PlanStatus::ok) {
      plan.status = PlanStatus::oom;
      plan.reason = fmt::format("stage {} peaks at {:.1f} GiB (simulated)", stage.stage,
                                static_cast<double>(stage.peak_memory) / static_cast<double>(kBytesPerGiB));
    }
  }
}

void simulate_plan(PlanOutcome& plan, bool reuse, PhaseTotals& totals) {
  Clock::time_point start = Clock::now();
  const TrainingWorkload workload =
      build_training_workload(plan.scenario, {.unfold = false, .name_ops = false, .composites = reuse});
  start = PhaseTotals::lap(totals.graph, start);
  SimulationOptions options;
  options.reuse = reuse;
  const SimulationResult result = simulate(workload.graph, *workload.cost_model, options);
  start = PhaseTotals::lap(totals.engine, start);
  record_simulation(plan, workload, result);
  PhaseTotals::lap(totals.report, start);
}

// `plan`, and `reordered`, the same layout in another schedule of the same passes (GPipe for a
// 1F1B plan): one workload, simulated once and resumed from a checkpoint in the other order.
// Returns whether it was resumed: a workload whose stages do not all run backward passes (a frozen
// encoder ahead of every trainable module) has no GPipe order of the same passes, and `reordered`
// is then simulated on its own.
bool simulate_plan_and_reordered(PlanOutcome& plan, PlanOutcome& reordered, PhaseTotals& totals) {
  Clock::time_point start = Clock::now();
  TrainingWorkload workload = build_training_workload(plan.scenario, {.unfold = false, .name_ops = false});
  start = PhaseTotals::lap(totals.graph, start);
  SimulationOptions options;
  options.cache = &ScheduleCache::shared();
  const SimulationCheckpoint checkpoint(workload.graph, *workload.cost_model, options);
  start = PhaseTotals::lap(totals.engine, start);
  record_simulation(plan, workload, checkpoint.result());
  start = PhaseTotals::lap(totals.report, start);
  const ParallelPlan& layout = reordered.scenario.parallel;
  std::optional<StreamOrder> order;
  try {
    order = schedule_order(workload, layout.schedule, layout.vpp);
  } catch (const InputError&) {
    simulate_plan(reordered, true, totals);
    return false;
  }
  auto resumed = checkpoint.resume(*order);
  workload.graph = std::move(resumed.reissued.graph);
  for (PassOp& pass : workload.passes) pass.op = resumed.reissued.op_of[pass.op.value()];
  start = PhaseTotals::lap(totals.engine, start);
  record_simulation(reordered, workload, resumed.result);
  PhaseTotals::lap(totals.report, start);
  return true;
}

// What one task simulates: a plan, and with it the plan resumed from its checkpoint, if any.
struct SimulationTask {
  std::size_t plan = 0;
  std::optional<std::size_t> reordered;
};

// For each plan, the 1F1B plan of the same layout when it is a GPipe plan that has one (the same
// passes in another order on each stage of a chain; modules on stages of their own are built in
// each schedule); otherwise the plan itself.
std::vector<std::size_t> one_f_one_b_partners(const std::vector<PlanOutcome>& plans) {
  std::map<std::string, std::size_t> one_f_one_b;
  for (std::size_t i = 0; i < plans.size(); ++i) {
    if (plans[i].scenario.parallel.schedule == PipelineSchedule::one_f_one_b) one_f_one_b.emplace(plans[i].label, i);
  }
  std::vector<std::size_t> partner(plans.size());
  for (std::size_t i = 0; i < plans.size(); ++i) {
    partner[i] = i;
    const ParallelPlan& plan = plans[i].scenario.parallel;
    if (plan.schedule != PipelineSchedule::gpipe || !plan.modality_stages.empty()) continue;
    TrainingScenario layout = plans[i].scenario;
    layout.parallel.schedule = PipelineSchedule::one_f_one_b;
    if (auto it = one_f_one_b.find(plan_label(layout)); it != one_f_one_b.end()) partner[i] = it->second;
  }
  return partner;
}

// A task per plan to simulate, except that with reuse a GPipe plan goes with its 1F1B partner
// when both are simulated.
std::vector<SimulationTask> simulation_tasks(const std::vector<std::size_t>& to_simulate,
                                             const std::vector<std::size_t>& partner, bool reuse) {
  std::map<std::size_t, std::size_t> gpipe_of;  // 1F1B plan -> its GPipe plan, both to simulate
  if (reuse) {
    for (std::size_t i : to_simulate) {
      if (partner[i] != i) gpipe_of.emplace(partner[i], i);
    }
  }
  std::vector<SimulationTask> tasks;
  std::set<std::size_t> paired;
  for (std::size_t i : to_simulate) {
    if (auto it = gpipe_of.find(i); it != gpipe_of.end()) {
      tasks.push_back({i, it->second});
      paired.insert({i, it->second});
    }
  }
  for (std::size_t i : to_simulate) {
    if (!paired.contains(i)) tasks.push_back({i, std::nullopt});
  }
  return tasks;
}

// A plan that passed the memory estimate and has not been simulated yet.
bool waits(const PlanOutcome& plan) { return plan.status == PlanStatus::ok && !plan.simulated(); }

bool ranks_before(const PlanOutcome& a, const PlanOutcome& b) {
  if (a.status != b.status) return a.status < b.status;
  if (a.status == PlanStatus::ok) {
    const double ta = a.report->tokens_per_s;
    const double tb = b.report->tokens_per_s;
    if (ta != tb) return ta > tb;
    const Bytes headroom_a = a.memory_capacity - a.peak_memory();
    const Bytes headroom_b = b.memory_capacity - b.peak_memory();
    if (headroom_a != headroom_b) return headroom_a > headroom_b;
  }
  return a.label < b.label;
}

// Simulates tasks of plans on the sweep's threads, counting the time of each phase and the plans
// done.
struct SweepRun {
  SweepResult& sweep;
  const SweepOptions& options;
  std::vector<std::size_t> partner = one_f_one_b_partners(sweep.plans);
  PhaseTotals totals;
  std::atomic<std::size_t> done{0};
  std::size_t total = 0;  // plans to simulate, less those pruned so far
  std::atomic<std::int64_t> resumed{0};

  SweepRun(SweepResult& s, const SweepOptions& o, std::size_t to_simulate) : sweep(s), options(o), total(to_simulate) {}

  bool stopped() const { return options.stop && options.stop(); }

  // Simulates `plans` (waiting ones); returns early when stopped.
  void simulate(const std::vector<std::size_t>& plans) {
    const std::vector<SimulationTask> tasks = simulation_tasks(plans, partner, options.reuse);
    tbb::task_arena arena(std::max(1, options.threads));
    arena.execute([&] {
      tbb::parallel_for(tbb::blocked_range<std::size_t>(0, tasks.size(), 1), [&](const auto& range) {
        for (std::size_t i = range.begin(); i < range.end(); ++i) {
          if (stopped()) return;
          run(tasks[i]);
        }
      });
    });
  }

 private:
  void run(const SimulationTask& task) {
    PlanOutcome& plan = sweep.plans[task.plan];
    if (task.reordered) {
      if (simulate_plan_and_reordered(plan, sweep.plans[*task.reordered], totals)) ++resumed;
    } else {
      simulate_plan(plan, options.reuse, totals);
    }
    if (options.on_simulated) {
      options.on_simulated(plan);
      if (task.reordered) options.on_simulated(sweep.plans[*task.reordered]);
    }
    const std::size_t finished = done += task.reordered ? 2 : 1;
    if (options.progress) options.progress(finished, total);
  }
};

// Plans simulated between two prunings: fixed, so that which plans are pruned does not depend on
// the thread count; large enough to keep many threads busy.
constexpr std::size_t kPruningBlock = 32;

// The most tokens per second the plan can reach: its tokens per iteration over its iteration
// bound, computed as its report would compute them, so that a plan simulated to take at least
// the bound reports at most this (infinite without a bound).
double tokens_per_s_at_most(const PlanOutcome& plan) {
  if (!plan.iteration_bound || *plan.iteration_bound <= 0) return std::numeric_limits<double>::infinity();
  return uniform_iteration_tokens(plan.scenario) / (static_cast<double>(*plan.iteration_bound) / kNsPerSecond);
}

// The plans to simulate (waiting, or given their outcome before by a journal), best bound first;
// a GPipe plan right after its 1F1B partner, which it is simulated with (their bounds are the
// same).
std::vector<std::size_t> best_bounds_first(const std::vector<PlanOutcome>& plans,
                                           const std::vector<std::size_t>& partner) {
  std::vector<std::size_t> order;
  for (std::size_t i = 0; i < plans.size(); ++i) {
    if (waits(plans[i]) || plans[i].simulated()) order.push_back(i);
  }
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    const TimeNs bound_a = plans[a].iteration_bound.value_or(0);
    const TimeNs bound_b = plans[b].iteration_bound.value_or(0);
    if (bound_a != bound_b) return bound_a < bound_b;
    if (partner[a] != partner[b]) return partner[a] < partner[b];
    return a < b;
  });
  return order;
}

// Leaves the plans from `order[from]` on unsimulated: none of them can enter the top `top`, whose
// slowest plan is `kth`.
void prune(SweepResult& sweep, const std::vector<std::size_t>& order, std::size_t from, std::size_t top,
           const PlanOutcome& kth, SweepRun& run) {
  for (std::size_t i = from; i < order.size(); ++i) {
    PlanOutcome& plan = sweep.plans[order[i]];
    if (!waits(plan)) continue;
    plan.status = PlanStatus::pruned;
    plan.reason =
        fmt::format("its compute alone takes at least {:.3f} s; each of the {} best plans takes at most {:.3f} s",
                    static_cast<double>(*plan.iteration_bound) / kNsPerSecond, top, kth.report->iteration_time_s);
    ++sweep.pruned;
    --run.total;
  }
  if (run.options.progress) run.options.progress(run.done, run.total);
}

// Simulates the plans in blocks, best bound first; once the k-th best plan simulated so far is
// faster than the next plan's bound, that plan and every later one are pruned.
void simulate_best_bounds_first(SweepResult& sweep, std::size_t top, SweepRun& run) {
  const std::vector<std::size_t>& partner = run.partner;
  const std::vector<std::size_t> order = best_bounds_first(sweep.plans, partner);
  std::vector<const PlanOutcome*> best;  // the best `top` plans that fit so far, best first
  std::size_t next = 0;
  while (next < order.size()) {
    std::size_t end = std::min(order.size(), next + kPruningBlock);
    while (end < order.size() && partner[order[end]] == partner[order[end - 1]]) ++end;
    std::vector<std::size_t> block;
    for (std::size_t i = next; i < end; ++i) {
      if (waits(sweep.plans[order[i]])) block.push_back(order[i]);
    }
    run.simulate(block);
    if (run.stopped()) return;
    for (std::size_t i = next; i < end; ++i) {
      if (sweep.plans[order[i]].status == PlanStatus::ok) best.push_back(&sweep.plans[order[i]]);
    }
    std::sort(best.begin(), best.end(),
              [](const PlanOutcome* a, const PlanOutcome* b) { return ranks_before(*a, *b); });
    if (best.size() > top) best.resize(top);
    next = end;
    if (next == order.size() || best.size() < top) continue;
    if (tokens_per_s_at_most(sweep.plans[order[next]]) < best.back()->report->tokens_per_s) {
      prune(sweep, order, next, top, *best.back(), run);
      return;
    }
  }
}

}  // namespace

Bytes PlanOutcome::peak_memory() const {
  return stage_memory.empty() ? 0 : *std::max_element(stage_memory.begin(), stage_memory.end());
}

SweepResult enumerate_sweep(const TrainingScenario& base, const SweepGrid& grid, int gpus, std::int64_t max_ops) {
  const std::int64_t op_limit = graph_op_limit(max_ops);
  const Clock::time_point start = Clock::now();
  PlanEnumeration enumeration = enumerate_plans(base, grid, gpus);
  SweepResult result;
  result.phases.derive = seconds_since(start);
  const Clock::time_point estimates = Clock::now();
  result.considered = static_cast<std::int64_t>(enumeration.plans.size());
  result.invalid = enumeration.invalid;
  result.invalid_by_reason = std::move(enumeration.invalid_by_reason);
  IterationBound iteration_bound(base);
  LayerStepsByContext layer_steps(base);
  for (PlanCandidate& candidate : enumeration.plans) {
    PlanOutcome plan;
    plan.label = plan_label(candidate.scenario);
    // The largest GPU's memory: a plan is dropped only if it fits on no GPU of the cluster; the
    // simulation gives each stage its own GPU's verdict.
    plan.memory_capacity = candidate.scenario.cluster.largest_memory();
    plan.scenario = std::move(candidate.scenario);
    if (!candidate.valid()) {
      plan.status = PlanStatus::invalid;
      plan.reason = candidate.invalid_rule;
    } else if (const GraphSize size = estimate_training_graph(plan.scenario, {}, layer_steps(plan.scenario, false));
               size.held_ops > op_limit) {
      // Refused as simulate would refuse it; the rest of the grid goes on.
      plan.status = PlanStatus::invalid;
      plan.reason = kGraphTooLarge;
      ++result.invalid;
      ++result.invalid_by_reason[plan.reason];
    } else if (passes_memory_estimate(plan, layer_steps)) {
      ++result.simulated;
      plan.graph_ops = size.held_ops;
      // The bound costs ops on the cluster's own GPU, at the plan's tp and dp: with node groups
      // of other (perhaps faster) GPUs, or modules on meshes of their own, it would not be a
      // bound, and such plans are not pruned.
      if (plan.scenario.cluster.node_groups.empty() && !plan.scenario.parallel.per_module_meshes())
        plan.iteration_bound = iteration_bound(plan.scenario);
      result.estimated_graph_ops = saturating_add(result.estimated_graph_ops, size.held_ops);
    } else {
      ++result.dropped_by_memory_estimate;
    }
    result.plans.push_back(std::move(plan));
  }
  result.phases.estimate = seconds_since(estimates);
  return result;
}

void simulate_sweep(SweepResult& sweep, const SweepOptions& options) {
  std::vector<std::size_t> to_simulate;
  for (std::size_t i = 0; i < sweep.plans.size(); ++i) {
    if (waits(sweep.plans[i])) to_simulate.push_back(i);
  }
  sweep.reused = sweep.simulated - static_cast<std::int64_t>(to_simulate.size());

  SweepRun run(sweep, options, to_simulate.size());
  if (options.prune_beyond_top == 0) {
    run.simulate(to_simulate);
  } else {
    simulate_best_bounds_first(sweep, options.prune_beyond_top, run);
  }
  sweep.phases.graph = static_cast<double>(run.totals.graph.load()) * 1e-9;
  sweep.phases.engine = static_cast<double>(run.totals.engine.load()) * 1e-9;
  sweep.phases.report = static_cast<double>(run.totals.report.load()) * 1e-9;
  sweep.resumed = run.resumed.load();
  sweep.simulated -= sweep.pruned;
  sweep.unfinished = std::count_if(sweep.plans.begin(), sweep.plans.end(), waits);
  if (sweep.interrupted()) return;

  for (const PlanOutcome& plan : sweep.plans) {
    if (plan.status == PlanStatus::oom) ++sweep.out_of_memory;
    if (plan.status == PlanStatus::ok) ++sweep.feasible;
  }
  std::stable_sort(sweep.plans.begin(), sweep.plans.end(), ranks_before);
}

SweepResult run_sweep(const TrainingScenario& base, const SweepGrid& grid, int gpus, const SweepOptions& options) {
  SweepResult result = enumerate_sweep(base, grid, gpus, options.max_ops);
  simulate_sweep(result, options);
  return result;
}

}  // namespace weft
