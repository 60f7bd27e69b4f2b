#pragma once

#include <map>
#include <optional>
#include <vector>

#include "calibration/measurements.hpp"
#include "cost_models/calibrated_cost_model.hpp"

namespace weft {

// The best a device did in its measurements (those calibration fits): the references a
// profile's efficiencies are fractions of, and the capacities of the cluster spec derived from
// the measurements.
//   best_flops             per dtype, the fastest GEMM (nominal FLOPs over median time); for a
//                          dtype without GEMMs, the fastest attention
//   best_memory_bandwidth  per dtype, the fastest memory-bound op of any kind (bytes moved over
//                          median time)
//   point_to_point_fit     latency and bandwidth of sends between two ranks, if measured
std::map<Dtype, double> best_flops(const std::vector<Measurement>& measurements);
std::map<Dtype, double> best_memory_bandwidth(const std::vector<Measurement>& measurements);
// Of the sends between two ranks of one node, or, with `across_nodes`, of two nodes.
std::optional<AlphaBeta> point_to_point_fit(const std::vector<Measurement>& measurements, bool across_nodes = false);

// Whether a measurement timed a memory-bound op (elementwise, norm, optimizer), and the bytes it
// moved as the simulator counts them for that op.
bool is_memory_bound_measurement(const Measurement& measurement);
double memory_bound_bytes(const Measurement& measurement);

}  // namespace weft
