#pragma once

#include <limits>
#include <vector>

#include "cost_models/cost_model.hpp"
#include "simulator/engine/schedule_cache.hpp"
#include "simulator/engine/simulation_result.hpp"
#include "simulator/graph/graph.hpp"

namespace weft {

// A host so far ahead of its device that it never holds an op back.
inline constexpr TimeNs kHostAhead = std::numeric_limits<TimeNs>::min();

struct SimulationOptions {
  // Keep every change of each device's live memory (for traces); the peak is always computed.
  bool record_memory_timeline = false;
  // Simulate each subgraph template once per situation and stamp it for every composite
  // (exactly: where stamping could change the answer, the graph is simulated in full instead).
  // Off: composites are expanded and every op is simulated.
  bool reuse = true;
  // Where template schedules are kept; null means the process-wide cache (SimulationCheckpoint
  // reads null as a cache of its own instead).
  ScheduleCache* cache = nullptr;
  // Time from which each stream may run its first op (empty: all at 0); the engine uses it to
  // simulate templates whose streams are still busy when they start.
  std::vector<TimeNs> stream_available;
  // Per stream: when the host that issues it (a host-issued stream's) has issued every op before
  // the graph's, or kHostAhead. Empty: at 0 for every stream, as a training iteration starts.
  // The engine uses it to simulate templates that start while their host is still issuing.
  std::vector<TimeNs> host_issued_until;
};

// Discrete-event simulation of one graph. Ops start as soon as every dependency has finished and
// their stream lets them: an in_order stream runs its ops in issue order, a first_ready stream
// runs whichever waiting op became ready first (ties by op id). An op of a host-issued stream
// also waits until the host has issued it: the host issues the stream's ops in order, one every
// CostModel::host_issue_ns, without waiting for the device. A collective's members start
// together when the last of them is ready. Time is integer nanoseconds and every tie is broken
// by op id, so the result depends on nothing but the inputs.
SimulationResult simulate(const Graph& graph, const CostModel& cost_model, const SimulationOptions& options = {});

}  // namespace weft
