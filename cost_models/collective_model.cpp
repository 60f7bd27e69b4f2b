#include "cost_models/collective_model.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

#include "cost_models/nccl_tuning.hpp"

namespace weft {
namespace {

bool nccl_tunes(OpClass op_class) {
  return op_class == OpClass::allreduce || op_class == OpClass::allgather || op_class == OpClass::reducescatter ||
         op_class == OpClass::broadcast;
}

CommGroup intra_node_part(const CommGroup& group) {
  CommGroup part = group;
  part.size = group.ranks_per_node;
  part.nodes = 1;
  return part;
}

// One rank per node, on as many nodes as the group spans: the rings that cross nodes in the
// hierarchical algorithm, each on its own local rank's NICs.
CommGroup inter_node_part(const CommGroup& group) {
  CommGroup part = group;
  part.size = group.nodes;
  part.ranks_per_node = 1;
  return part;
}

}  // namespace

double CollectiveModel::nvlink_bandwidth(const CommGroup& group) const {
  return cluster_.nvlink_bandwidth * cluster_.network_efficiency * group.nvlink_speed;
}

double CollectiveModel::gpu_network_bandwidth(const CommGroup& group) const {
  return cluster_.network_bandwidth_per_gpu() * cluster_.nic_efficiency * group.network_speed;
}

double CollectiveModel::ring_bandwidth(const CommGroup& group) const {
  if (group.nodes <= 1) return nvlink_bandwidth(group);
  // A node's inter-node traffic is shared by the NICs of its members in the group.
  return std::min(nvlink_bandwidth(group), gpu_network_bandwidth(group) * group.ranks_per_node);
}

double CollectiveModel::step_latency(const CommGroup& group) const {
  return group.nodes > 1 ? cluster_.network_latency_s : cluster_.nvlink_latency_s;
}

double CollectiveModel::nccl_time(OpClass op_class, Bytes bytes, const CommGroup& group,
                                  NcclAlgorithm algorithm) const {
  const NcclLinks links{ring_bandwidth(group), compute_capability(cluster_.gpu.architecture)};
  double best = std::numeric_limits<double>::infinity();
  for (NcclProtocol protocol : {NcclProtocol::ll, NcclProtocol::ll128, NcclProtocol::simple}) {
    if (const auto seconds = nccl_collective_seconds(op_class, algorithm, protocol, bytes, group, links)) {
      best = std::min(best, *seconds);
    }
  }
  return best;
}

bool CollectiveModel::runs_nvls(OpClass op_class, const CommGroup& group) const {
  return cluster_.collectives == CollectiveRules::nccl && cluster_.nvls_efficiency > 0.0 &&
         op_class == OpClass::allreduce && group.nodes == 1 && group.size > 2;
}

// NVLink SHARP: each GPU sends its buffer into the switch, which reduces it and multicasts the
// result back, so the buffer crosses each GPU's NVLink once each way at the rate NVLS reaches
// (nvls_efficiency of the line rate, from nccl-tests); the latency is NCCL's NVLS hop (25 us).
double CollectiveModel::nvls_time(Bytes bytes, const CommGroup& group) const {
  constexpr double kNvlsLatencyS = 25e-6;  // hwLatencies[NVLINK][NVLS][Simple], tuning.cc
  return kNvlsLatencyS +
         static_cast<double>(bytes) / (cluster_.nvlink_bandwidth * cluster_.nvls_efficiency * group.nvlink_speed);
}

double CollectiveModel::time(OpClass op_class, Bytes bytes, const CommGroup& group,
                             CollectiveAlgorithm algorithm) const {
  const double size = static_cast<double>(bytes);
  const double n = group.size;
  if (group.size <= 1 && op_class != OpClass::send && op_class != OpClass::recv) return 0.0;
  if (algorithm == CollectiveAlgorithm::nvls) {
    if (runs_nvls(op_class, group)) return nvls_time(bytes, group);
    algorithm = CollectiveAlgorithm::ring;
  }
  if (cluster_.collectives == CollectiveRules::nccl && nccl_tunes(op_class) &&
      algorithm != CollectiveAlgorithm::hierarchical) {
    const bool tree = algorithm == CollectiveAlgorithm::tree && op_class == OpClass::allreduce;
    return nccl_time(op_class, bytes, group, tree ? NcclAlgorithm::tree : NcclAlgorithm::ring);
  }
  switch (algorithm) {
    case CollectiveAlgorithm::ring:
    case CollectiveAlgorithm::nvls:  // (ring by now: NVLS is NCCL's, on NVLink SHARP only)
      switch (op_class) {
        case OpClass::allreduce:
          return 2.0 * (n - 1) / n * size / ring_bandwidth(group) + 2.0 * (n - 1) * step_latency(group);
        case OpClass::allgather:
        case OpClass::reducescatter:
          return (n - 1) / n * size / ring_bandwidth(group) + (n - 1) * step_latency(group);
        case OpClass::broadcast:
          return size / ring_bandwidth(group) + (n - 1) * step_latency(group);
        case OpClass::alltoall: {
          // Each rank keeps 1/n of its data; of the rest, what goes to other nodes uses the NICs.
          const double local = group.ranks_per_node;
          const double over_nvlink = (local - 1) / n * size / nvlink_bandwidth(group);
          const double over_network = group.nodes > 1 ? (n - local) / n * size / gpu_network_bandwidth(group) : 0.0;
          return std::max(over_nvlink, over_network) + (n - 1) * step_latency(group);
        }
        case OpClass::send:
        case OpClass::recv: {
          const double bandwidth = group.nodes > 1 ? gpu_network_bandwidth(group) : nvlink_bandwidth(group);
          return size / bandwidth + step_latency(group);
        }
        default:
          throw std::invalid_argument("not a communication op class");
      }
    case CollectiveAlgorithm::tree: {
      if (op_class != OpClass::allreduce || group.nodes <= 1)
        return time(op_class, bytes, group, CollectiveAlgorithm::ring);
      const double bandwidth_term = 2.0 * (n - 1) / n * size / ring_bandwidth(group);
      const double depth = std::ceil(std::log2(static_cast<double>(group.nodes)));
      const double latency =
          2.0 * (depth * cluster_.network_latency_s + (group.ranks_per_node - 1) * cluster_.nvlink_latency_s);
      return bandwidth_term + latency;
    }
    case CollectiveAlgorithm::hierarchical: {
      if (op_class != OpClass::allreduce || group.nodes <= 1 || group.ranks_per_node <= 1) {
        return time(op_class, bytes, group, CollectiveAlgorithm::ring);
      }
      const CommGroup local = intra_node_part(group);
      const Bytes shard = bytes / group.ranks_per_node;
      return time(OpClass::reducescatter, bytes, local, CollectiveAlgorithm::ring) +
             time(OpClass::allreduce, shard, inter_node_part(group), CollectiveAlgorithm::ring) +
             time(OpClass::allgather, bytes, local, CollectiveAlgorithm::ring);
    }
  }
  throw std::invalid_argument("unknown collective algorithm");
}

CollectiveTime CollectiveModel::time(OpClass op_class, Bytes bytes, const CommGroup& group) const {
  CollectiveTime best{time(op_class, bytes, group, CollectiveAlgorithm::ring), CollectiveAlgorithm::ring};
  if (cluster_.collectives == CollectiveRules::nccl) {
    // NCCL runs a tree inside a node too, and never the hierarchical composition.
    if (op_class != OpClass::allreduce || group.size <= 1) return best;
    for (CollectiveAlgorithm algorithm : {CollectiveAlgorithm::tree, CollectiveAlgorithm::nvls}) {
      if (algorithm == CollectiveAlgorithm::nvls && !runs_nvls(op_class, group)) continue;
      const double seconds = time(op_class, bytes, group, algorithm);
      if (seconds < best.seconds) best = {seconds, algorithm};
    }
    return best;
  }
  if (op_class != OpClass::allreduce || group.nodes <= 1) return best;
  for (CollectiveAlgorithm algorithm : {CollectiveAlgorithm::tree, CollectiveAlgorithm::hierarchical}) {
    const double seconds = time(op_class, bytes, group, algorithm);
    if (seconds < best.seconds) best = {seconds, algorithm};
  }
  return best;
}

}  // namespace weft
