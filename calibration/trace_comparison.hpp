#pragma once

#include <map>
#include <string>
#include <vector>

#include "simulator/core/json_cursor.hpp"

namespace weft {

// What weft validate reads of a Chrome trace, simulated (weft simulate --trace) or measured (weft
// live --trace): the iteration time and, per pipeline stage, the mean over the stage's ranks of
// their compute streams' busy time and of each op class's summed op time. Ranks are the
// processes labelled "stage N / ..."; point-to-point links ("p2p stage A -> B ...") count their
// transfers for stage A. Received messages (class recv) mirror sends and are left out.
struct TraceSummary {
  double iteration_s = 0.0;
  std::map<int, double> compute_s;                       // by stage
  std::map<std::string, std::map<int, double>> class_s;  // by op class, then stage
};

TraceSummary summarize_trace(const JsonCursor& root);

// One quantity simulated and measured; error = (simulated - measured) / measured.
struct ComparedValue {
  std::string what;
  double simulated_s = 0.0;
  double measured_s = 0.0;
  double error() const { return measured_s > 0.0 ? (simulated_s - measured_s) / measured_s : 0.0; }
};

struct TraceComparison {
  ComparedValue iteration;
  std::vector<ComparedValue> stages;   // compute time per stage
  std::vector<ComparedValue> classes;  // op time per class, summed over stages
};

// Stages and classes present in either trace are compared (zero where one lacks them).
TraceComparison compare_traces(const TraceSummary& simulated, const TraceSummary& measured);

}  // namespace weft
