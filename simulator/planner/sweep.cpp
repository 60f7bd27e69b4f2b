#include "simulator/planner/sweep.hpp"

#include <algorithm>
#include <atomic>

#include <fmt/format.h>
#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>
#include <tbb/task_arena.h>

#include "simulator/engine/engine.hpp"
#include "simulator/planner/memory_estimate.hpp"
#include "simulator/planner/plan_enumeration.hpp"

namespace weft {
namespace {

// Drops the plan if its memory lower bound cannot fit; returns whether it may.
bool passes_memory_estimate(PlanOutcome& plan) {
  plan.stage_memory = estimate_stage_memory(plan.scenario);
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

void simulate_plan(PlanOutcome& plan, bool reuse) {
  const TrainingWorkload workload =
      build_training_workload(plan.scenario, {.unfold = false, .name_ops = false, .composites = reuse});
  SimulationOptions options;
  options.reuse = reuse;
  const SimulationResult result = simulate(workload.graph, *workload.cost_model, options);
  plan.report = make_training_report(plan.scenario, workload, result);
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

}  // namespace

Bytes PlanOutcome::peak_memory() const {
  return stage_memory.empty() ? 0 : *std::max_element(stage_memory.begin(), stage_memory.end());
}

SweepResult run_sweep(const TrainingScenario& base, const SweepGrid& grid, int gpus, const SweepOptions& options) {
  PlanEnumeration enumeration = enumerate_plans(base, grid, gpus);
  SweepResult result;
  result.considered = static_cast<std::int64_t>(enumeration.plans.size());
  result.invalid = enumeration.invalid;
  result.invalid_by_reason = std::move(enumeration.invalid_by_reason);

  std::vector<std::size_t> to_simulate;
  for (PlanCandidate& candidate : enumeration.plans) {
    PlanOutcome plan;
    plan.label = plan_label(candidate.scenario);
    plan.memory_capacity = candidate.scenario.cluster.gpu.memory_capacity;
    plan.scenario = std::move(candidate.scenario);
    if (!candidate.valid()) {
      plan.status = PlanStatus::invalid;
      plan.reason = candidate.invalid_rule;
    } else if (passes_memory_estimate(plan)) {
      to_simulate.push_back(result.plans.size());
    } else {
      ++result.dropped_by_memory_estimate;
    }
    result.plans.push_back(std::move(plan));
  }

  std::atomic<std::size_t> done{0};
  tbb::task_arena arena(std::max(1, options.threads));
  arena.execute([&] {
    tbb::parallel_for(tbb::blocked_range<std::size_t>(0, to_simulate.size(), 1), [&](const auto& range) {
      for (std::size_t i = range.begin(); i < range.end(); ++i) {
        simulate_plan(result.plans[to_simulate[i]], options.reuse);
        const std::size_t finished = ++done;
        if (options.progress) options.progress(finished, to_simulate.size());
      }
    });
  });
  result.simulated = static_cast<std::int64_t>(to_simulate.size());

  for (const PlanOutcome& plan : result.plans) {
    if (plan.status == PlanStatus::oom) ++result.out_of_memory;
    if (plan.status == PlanStatus::ok) ++result.feasible;
  }
  std::stable_sort(result.plans.begin(), result.plans.end(), ranks_before);
  return result;
}

}  // namespace weft
