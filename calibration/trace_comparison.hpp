#pragma once

#include <algorithm>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "simulator/core/json_cursor.hpp"

namespace weft {

// What weft validate reads of a Chrome trace, simulated (weft simulate --trace) or measured (weft
// live --trace): the iteration time and, per pipeline stage, the mean over the stage's ranks of
// their compute streams' busy time and of each op class's summed op time. Ranks are the
// processes labelled "stage N / ..."; point-to-point links ("p2p stage A -> B ...") count their
// transfers for stage A. Received messages (class recv) mirror sends and are left out.
//
// `rank_spread` is how much longer the slowest rank of a stage computed than the fastest, over the
// stages of two ranks or more, at most: (max - min) / min of their compute busy times. The ranks of
// a stage (its TP, CP and DP peers) do the same work, so in a simulation it is 0; measured, it
// shows a device that ran slower than its peers (on a shared host, a core the host lent elsewhere
// for a while). The simulation assumes identical devices, so a measurement whose spread exceeds
// kDisturbedSpread is called disturbed (undisturbed runs of the bundled CPU plans on a 2-core
// machine stay within 3%, docs/ACCURACY.md).
struct TraceSummary {
  double iteration_s = 0.0;
  // The fastest and slowest of the measured iterations (otherData.measured.iteration_ns of a
  // weft live trace); iteration_s for a trace without them.
  std::pair<double, double> iteration_range_s;
  std::map<int, double> compute_s;                       // by stage
  std::map<std::string, std::map<int, double>> class_s;  // by op class, then stage
  double rank_spread = 0.0;
};

inline constexpr double kDisturbedSpread = 0.05;

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
  double measured_rank_spread = 0.0;
  // How far apart the stages computed relative to the simulation: (max - min) / min, over the
  // stages both traces time, of measured / simulated compute time. Ranks of different stages do
  // different work, which only the simulation can relate: on identical devices, and with a model
  // whose error does not depend on the op mix, every stage computes at the same fraction of its
  // simulated time. A pipeline of one rank per stage shows a slow device here and nowhere else. A
  // spread can also come from the model mispredicting the ops of one stage more than another's.
  double measured_stage_rate_spread = 0.0;
  std::pair<double, double> measured_range_s;
  bool measured_disturbed() const {
    return std::max(measured_rank_spread, measured_stage_rate_spread) > kDisturbedSpread;
  }
};

// Stages and classes present in either trace are compared (zero where one lacks them).
TraceComparison compare_traces(const TraceSummary& simulated, const TraceSummary& measured);

}  // namespace weft
