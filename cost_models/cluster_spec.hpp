#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cost_models/calibrated_cost_model.hpp"
#include "cost_models/device_spec.hpp"
#include "cost_models/roofline_cost_model.hpp"
#include "cost_models/stragglers.hpp"
#include "simulator/core/json_cursor.hpp"

namespace weft {

enum class NetworkTopology : std::uint8_t { rail_optimized, fat_tree };

inline constexpr EnumNames<NetworkTopology, 2> kNetworkTopologyNames({"rail-optimized", "fat-tree"});

// How collectives are costed (docs/collectives.md): by NCCL's tuner model (GPU clusters' default),
// or by a latency-bandwidth model with the cluster's per-step latencies (CPU clusters' default:
// MPI between ranks).
enum class CollectiveRules : std::uint8_t { nccl, latency_bandwidth };

inline constexpr EnumNames<CollectiveRules, 2> kCollectiveRulesNames({"nccl", "latency-bandwidth"});

// Nodes whose GPUs are not the cluster's `gpu` (a cluster of mixed GPU types): nodes
// [first_node, first_node + nodes), with their own GPU and its calibration profile.
struct NodeGroup {
  int first_node = 0;
  int nodes = 0;
  DeviceSpec gpu;
  std::shared_ptr<const CalibratedCostModel> calibration;
};

// A GPU cluster: nodes of GPUs joined by NVLink/NVSwitch, and a scale-out network of
// NICs. Nodes are alike but for their GPUs where node groups give some nodes another type. Bandwidths are one
// direction, in bytes per second. A cluster of CPU ranks (one rank per core or socket, MPI between them) is described
// the same way, its `gpu` a device of kind cpu.
struct ClusterSpec {
  std::string name;
  DeviceSpec gpu;
  int gpus = 0;  // GPUs in the cluster
  int gpus_per_node = 8;
  double nvlink_bandwidth = 0.0;  // per GPU, to the node's NVSwitch
  int nics_per_node = 0;
  double nic_bandwidth = 0.0;  // per NIC (line rate)
  NetworkTopology topology = NetworkTopology::rail_optimized;
  // Fat tree only: how many times more bandwidth the leaves offer than the spine carries.
  double oversubscription = 1.0;
  CollectiveRules collectives = CollectiveRules::latency_bandwidth;
  // Per step of a latency-bandwidth collective, and of every all-to-all and send/recv.
  double nvlink_latency_s = 1e-6;   // within a node
  double network_latency_s = 5e-6;  // crossing the network
  // Roofline rules for compute (efficiencies by op class), and the fractions of NVLink and of NIC
  // line rate that collectives reach (from nccl-tests bus bandwidths, docs/collectives.md).
  RooflineCostModel compute_rules;
  double network_efficiency = 1.0;  // NVLink, and NICs unless nic_efficiency says otherwise
  double nic_efficiency = 1.0;
  // NVLink SHARP (NCCL's NVLS all-reduce inside a node): the fraction of NVLink line rate at which
  // the buffer crosses each GPU's link; 0 where the switches have none (before NVSwitch 3).
  double nvls_efficiency = 0.0;
  // A calibration profile (weft calibrate) measured on this cluster's device: where it covers an
  // op, it replaces the roofline rules and the collective model.
  std::shared_ptr<const CalibratedCostModel> calibration;
  // GPUs, NICs and NVLinks below their spec (stragglers.hpp); null when every part runs at full speed.
  std::shared_ptr<const Stragglers> stragglers;
  // Nodes of other GPU types (docs/stragglers.md, "Mixed GPU types"); empty: every node has `gpu`.
  std::vector<NodeGroup> node_groups;

  int nodes() const { return (gpus + gpus_per_node - 1) / gpus_per_node; }
  // Scale-out bandwidth one GPU can use: its share of the node's NICs, less any spine
  // oversubscription in a fat tree.
  double network_bandwidth_per_gpu() const;
  // The speed of GPU `rank` (a global rank under Megatron's placement) and of node `node`'s NICs.
  double gpu_speed(std::int64_t rank) const { return stragglers ? stragglers->gpu(rank) : 1.0; }
  double nic_speed(std::int64_t node) const { return stragglers ? stragglers->nic(node) : 1.0; }
  double nvlink_speed(std::int64_t node) const { return stragglers ? stragglers->nvlink(node) : 1.0; }
  // The node group of GPU `rank`'s node, or -1 for the cluster's own `gpu`.
  int node_group_of(std::int64_t rank) const;
  // The GPU of node group `group` (-1: the cluster's).
  const DeviceSpec& gpu_of_group(int group) const {
    return group < 0 ? gpu : node_groups[static_cast<std::size_t>(group)].gpu;
  }
  // The profile that costs the ops of GPU type `spec` (by name): the cluster's for its own GPU, a
  // node group's for its GPU; null where there is none.
  const CalibratedCostModel* calibration_for(const DeviceSpec& spec) const;
  // The dense peak in `dtype` over the cluster's first `gpus` GPUs, averaged.
  double mean_peak(Dtype dtype, std::int64_t gpus) const;
  // The largest memory of any of the cluster's GPUs.
  Bytes largest_memory() const;
};

// A cluster given by name from scenarios/clusters/<name>.json, inline, or as
// {"base": "<name>", <fields to override>}.
ClusterSpec load_cluster_spec(const JsonCursor& json);

}  // namespace weft
