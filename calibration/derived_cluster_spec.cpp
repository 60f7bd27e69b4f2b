#include "calibration/derived_cluster_spec.hpp"

#include <algorithm>

#include "calibration/reference_rates.hpp"
#include "simulator/core/input_error.hpp"

namespace weft {

ClusterSpec derive_cluster_spec(const MeasurementSet& set) {
  ClusterSpec spec;
  spec.name = set.device;
  spec.gpu.name = set.device;
  spec.gpu.kind = set.backend == "cpu" ? DeviceKind::cpu : DeviceKind::gpu;
  for (const auto& [dtype, flops] : best_flops(set.measurements))
    spec.gpu.peak_flops[static_cast<std::size_t>(dtype)] = flops;
  for (const auto& [dtype, bandwidth] : best_memory_bandwidth(set.measurements)) {
    spec.gpu.memory_bandwidth = std::max(spec.gpu.memory_bandwidth, bandwidth);
  }
  spec.gpu.memory_capacity = set.device_memory_bytes;
  const std::optional<AlphaBeta> link = point_to_point_fit(set.measurements);
  const double link_bandwidth =
      link && link->seconds_per_byte > 0.0 ? 1.0 / link->seconds_per_byte : spec.gpu.memory_bandwidth;
  if (!(link_bandwidth > 0.0)) {
    throw InputError(
        "measurements: a cluster spec needs send or memory-bound measurements (to set the link bandwidth)");
  }
  spec.gpu.network_bandwidth = link_bandwidth;
  spec.gpus = std::max(1, set.ranks);
  // The nodes the bench ran on, kept apart: a group across them is costed as crossing the network.
  spec.gpus_per_node = std::clamp(set.node_ranks(), 1, spec.gpus);
  spec.nvlink_bandwidth = link_bandwidth;
  spec.nvlink_latency_s = link ? link->latency_s : 0.0;
  spec.nics_per_node = 1;
  // Between nodes, the sends measured across two of them; without those, the node's own link.
  const std::optional<AlphaBeta> network = point_to_point_fit(set.measurements, true);
  const bool measured_network = network && network->seconds_per_byte > 0.0;
  spec.nic_bandwidth = measured_network ? 1.0 / network->seconds_per_byte : link_bandwidth;
  spec.network_latency_s = measured_network ? network->latency_s : spec.nvlink_latency_s;
  return spec;
}

nlohmann::json cluster_spec_json(const ClusterSpec& spec, const std::string& description) {
  nlohmann::json peaks = nlohmann::json::object();
  for (std::size_t d = 0; d < kDtypeCount; ++d) {
    if (spec.gpu.peak_flops[d] > 0.0)
      peaks[std::string(kDtypeNames.name(static_cast<Dtype>(d)))] = spec.gpu.peak_flops[d] / 1e12;
  }
  nlohmann::json device = {{"name", spec.gpu.name},
                           {"kind", kDeviceKindNames.name(spec.gpu.kind)},
                           {"peak_tflops", peaks},
                           {"memory_bandwidth_GBps", spec.gpu.memory_bandwidth / kBytesPerGB},
                           {"network_bandwidth_GBps", spec.gpu.network_bandwidth / kBytesPerGB},
                           {"memory_MiB", static_cast<double>(spec.gpu.memory_capacity) / kBytesPerMiB}};
  return {{"name", spec.name},
          {"description", description},
          {"gpu", device},
          {"gpus", spec.gpus},
          {"gpus_per_node", spec.gpus_per_node},
          {"nvlink_GBps", spec.nvlink_bandwidth / kBytesPerGB},
          {"nics_per_node", spec.nics_per_node},
          {"nic_Gbps", spec.nic_bandwidth * 8.0 / 1e9},
          {"topology", kNetworkTopologyNames.name(spec.topology)},
          {"nvlink_latency_us", spec.nvlink_latency_s * 1e6},
          {"network_latency_us", spec.network_latency_s * 1e6},
          {"network_efficiency", spec.network_efficiency},
          {"nic_efficiency", spec.nic_efficiency},
          {"collectives", kCollectiveRulesNames.name(spec.collectives)}};
}

}  // namespace weft
