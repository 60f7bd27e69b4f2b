#pragma once

#include "calibration/measurements.hpp"
#include "cost_models/cluster_cost_model.hpp"

namespace weft {

// The op a measurement timed, as the simulator describes such an op (OpWork): a GEMM as
// gemm_work, attention with the FLOPs and the flash-attention memory traffic of the
// simulator's attention core, the memory-bound op with its bytes and two operations per output,
// communication with the placement of a group of the measurement's size on one node of `cost`'s
// cluster (registered with `cost`). Costing it with a cost model predicts the measurement.
OpWork measurement_work(const Measurement& measurement, ClusterCostModel& cost);

// The time `cost` gives the op of `measurement`, in seconds.
double predicted_seconds(const Measurement& measurement, ClusterCostModel& cost);

}  // namespace weft
