#pragma once

#include "calibration/measurements.hpp"
#include "cost_models/cluster_cost_model.hpp"

namespace weft {

// The op a compute or memory-bound measurement timed, as the simulator's modules build such an
// op (OpWork): a GEMM as gemm_work in the measured layout, attention with the FLOPs and the
// flash-attention memory traffic of the simulator's attention core, a norm or elementwise kernel
// as the Norm and Elementwise modules emit it over rows x width, an optimizer step as the
// training builder's, and the generic memory-bound op with its bytes and two operations per
// output. Calibration's efficiencies are relative to this op's FLOPs and bytes, so a profile
// costs the simulator's ops as the measured kernels ran.
OpWork compute_measurement_work(const Measurement& measurement);

// compute_measurement_work, and for communication the op over a group of the measurement's size
// placed on one node of `cost`'s cluster (registered with `cost`). Costing it with a cost model
// predicts the measurement.
OpWork measurement_work(const Measurement& measurement, ClusterCostModel& cost);

// The time `cost` gives the op of `measurement`, in seconds.
double predicted_seconds(const Measurement& measurement, ClusterCostModel& cost);

}  // namespace weft
