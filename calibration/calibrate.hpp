#pragma once

#include <memory>
#include <string>
#include <vector>

#include "calibration/measurements.hpp"
#include "cost_models/calibrated_cost_model.hpp"
#include "cost_models/cluster_spec.hpp"

namespace weft {

// A measurement file and the name to report it by.
struct MeasurementFile {
  std::string name;
  MeasurementSet set;
};

// How well a model predicts the held-out measurements of one group (an op class and dtype, or a
// collective and group size): relative errors (predicted - measured) / measured.
struct HoldoutErrors {
  std::string group;
  int count = 0;
  double default_mean_abs = 0.0;
  double default_max_abs = 0.0;
  double fitted_mean_abs = 0.0;
  double fitted_max_abs = 0.0;
};

struct Calibration {
  std::shared_ptr<const CalibratedCostModel> model;
  MeasurementSet measurements;  // the files merged
  ClusterSpec default_cluster;  // the roofline and collective model of derive_cluster_spec
  // Per group, the held-out measurements' errors, and for GEMMs measured off the grid the error
  // of predicting each from the fit of all the others ("gemm bf16 nt (leave one out)").
  std::vector<HoldoutErrors> holdout;
  std::vector<std::string> sources;
};

// Fits a profile to the measurements of one device (docs/calibration.md): efficiency tables over
// the grid of fit measurements for GEMMs, attention and the memory-bound op, a latency-bandwidth
// fit per collective and group size; then predicts every held-out measurement with the default
// model and with the fit. Files must share backend and device (InputError naming the file that
// differs); repeated shapes pool their samples.
Calibration calibrate(const std::vector<MeasurementFile>& files);

}  // namespace weft
