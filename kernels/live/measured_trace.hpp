#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kernels/backend.hpp"
#include "simulator/plan/execution_plan.hpp"

namespace weft {

// What a live run measured, for the trace's header.
struct MeasuredRunInfo {
  std::string backend;
  std::string device;
  int warmup = 0;
  std::vector<std::int64_t> iteration_ns;  // measured iterations
  std::size_t traced_iteration = 0;        // the median one, whose spans the trace holds
};

// The measured timeline in the Chrome Trace Event format of the simulated one
// (write_chrome_trace): one process per rank, labelled like the simulator's ranks ("stage 0 / tp
// 1 / dp 0", then the rank), one thread per stream and one for its transfers, an "X" span per op
// and transfer named as in the plan, with the same args; otherData carries makespan_ns (the
// traced iteration's time) and the measured iterations. `spans[r]` are rank r's spans.
// A communication op's span starts when its last participant launched it, as the simulator
// starts it; the time the rank waited before that is in its args (waited_us). A send ends when
// the first of its two ends saw it complete.
nlohmann::json measured_trace_json(const ExecutionPlan& plan, const std::vector<std::vector<TimedSpan>>& spans,
                                   const MeasuredRunInfo& info);

}  // namespace weft
