#pragma once

#include <memory>
#include <span>
#include <utility>

#include "simulator/engine/engine.hpp"
#include "simulator/graph/reissue.hpp"

namespace weft {

// Checkpoint-restore (papers/001 §4.2). A graph whose work is in composites (the passes of a
// pipeline's microbatches, say) is simulated once, and its templates' schedules are kept. A
// resumed simulation takes the same work with a new order of the ops on each stream and new
// dependency edges (what a pipeline schedule imposes on each rank) and simulates it with every
// composite collapsed into one node stamped from the kept schedules, wherever the new order
// leaves its situation as one already simulated; the others are simulated once more and kept
// too. The answer is the one simulating every op of the reordered graph gives (reuse is exact).
// The schedules are kept in `options.cache` when given (a sweep shares the process's), else in
// a cache of the checkpoint's own, which nothing else can evict from. resume() may run on several
// threads at once.
class SimulationCheckpoint {
 public:
  SimulationCheckpoint(Graph graph, const CostModel& cost_model, SimulationOptions options = {});

  const Graph& graph() const { return graph_; }
  const SimulationResult& result() const { return result_; }  // of the graph as given
  ScheduleCacheStats stats() const { return options_.cache->stats(); }

  struct Resumed {
    ReissuedGraph reissued;  // the graph simulated, and where each op of graph() went
    SimulationResult result;
  };
  // `order` and `edges` as reissue() takes them.
  Resumed resume(const StreamOrder& order, std::span<const std::pair<OpId, OpId>> edges = {}) const;

 private:
  Graph graph_;
  const CostModel& cost_model_;
  SimulationOptions options_;
  std::unique_ptr<ScheduleCache> own_cache_;
  SimulationResult result_;
};

}  // namespace weft
