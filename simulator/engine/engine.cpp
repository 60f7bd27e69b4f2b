#include "simulator/engine/engine.hpp"

#include "simulator/engine/fold_flat_result.hpp"
#include "simulator/engine/simulation.hpp"
#include "simulator/engine/template_scheduler.hpp"
#include "simulator/graph/flatten.hpp"

namespace weft {

SimulationResult simulate_graph(const Graph& graph, const CostModel& cost_model, const SimulationOptions& options,
                                ScheduleCache& cache, TemplateRecording* recording) {
  TemplateScheduler templates(cost_model, options, cache);
  if (graph.composite_count() == 0) return run_simulation(graph, cost_model, options, templates, recording);
  if (options.reuse) {
    try {
      return run_simulation(graph, cost_model, options, templates, recording);
    } catch (const ReuseNotExact&) {
      cache.count_fallback();
    }
  }
  const FlatGraph flat = flatten(graph);
  SimulationResult flat_result = run_simulation(flat.graph, cost_model, options, templates, recording);
  return fold_flat_result(graph, flat, std::move(flat_result));
}

SimulationResult simulate(const Graph& graph, const CostModel& cost_model, const SimulationOptions& options) {
  ScheduleCache& cache = options.cache != nullptr ? *options.cache : ScheduleCache::shared();
  return simulate_graph(graph, cost_model, options, cache, nullptr);
}

}  // namespace weft
