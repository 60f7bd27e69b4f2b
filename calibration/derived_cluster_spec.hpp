#pragma once

#include <nlohmann/json.hpp>

#include "calibration/measurements.hpp"
#include "cost_models/cluster_spec.hpp"

namespace weft {

// A cluster of the measured device, as the roofline and the collective model see it by default:
// one node of `set.ranks` ranks whose device (named after the measured device, kind cpu or gpu
// with the backend) peaks at the best FLOP/s measured per dtype and the best memory bandwidth,
// linked at the bandwidth and latency fitted to the sends between ranks (without send
// measurements, at the memory bandwidth with no latency); every efficiency 1, no launch
// overhead. What `weft bench --cluster-spec` writes, and the default model `weft calibrate`
// compares its fit with.
ClusterSpec derive_cluster_spec(const MeasurementSet& set);

// The cluster spec file for `spec` (docs/scenarios.md, cluster): what load_cluster_spec reads.
nlohmann::json cluster_spec_json(const ClusterSpec& spec, const std::string& description);

}  // namespace weft
