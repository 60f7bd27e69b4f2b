#pragma once

#include "cost_models/comm_group.hpp"
#include "cost_models/nccl_tuning.hpp"
#include "simulator/core/op_class.hpp"
#include "simulator/core/units.hpp"

namespace weft {

enum class CollectiveAlgorithm : std::uint8_t { ring, tree, hierarchical, nvls };

inline constexpr EnumNames<CollectiveAlgorithm, 4> kCollectiveAlgorithmNames({"ring", "tree", "hierarchical", "nvls"});

struct CollectiveTime {
  double seconds = 0.0;
  CollectiveAlgorithm algorithm = CollectiveAlgorithm::ring;
};

// The time of a collective on a cluster (docs/collectives.md). On GPU clusters all-reduce,
// all-gather, reduce-scatter and broadcast follow NCCL's own tuner model (nccl_tuning.hpp):
// NCCL's latencies and bandwidth factors per algorithm and protocol, the fastest combination
// chosen as NCCL chooses it. Otherwise, and for all-to-all and send/recv everywhere, a
// latency-bandwidth model with the cluster's per-step latencies (below). Message sizes follow
// nccl-tests: all-reduce and broadcast move a buffer of `bytes` on every rank; all-gather's
// `bytes` is the gathered output, reduce-scatter's the full input; all-to-all's what each rank
// holds; send/recv's the message.
//
// Within a node every GPU reaches every other at its NVLink bandwidth (NVSwitch); across nodes a
// GPU uses its share of the node's NICs. A ring is paced by its slowest hop; NCCL runs one ring
// per channel, so a node's inter-node traffic spreads over the NICs of its members. Algorithms:
//   ring          2(n-1) steps, each rank moving 2(n-1)/n of the buffer (all-reduce)
//   tree          NCCL's double binary tree across nodes with a chain inside each node:
//                 the bandwidth of a ring, latency logarithmic in the number of nodes
//   hierarchical  reduce-scatter inside nodes, all-reduce of the shards across nodes (one
//                 ring per local rank, each on its own NICs), all-gather inside nodes
// and the cheapest applicable one is used unless one is forced. Under NCCL's model the candidates
// are NCCL's own, ring and tree, and on a cluster with NVLink SHARP (nvls_efficiency > 0) NVLS
// for an all-reduce inside a node; hierarchical is only run when forced.
class CollectiveModel {
 public:
  explicit CollectiveModel(const ClusterSpec& cluster) : cluster_(cluster) {}

  CollectiveTime time(OpClass op_class, Bytes bytes, const CommGroup& group) const;
  // The time of one algorithm; tree and hierarchical apply to all-reduce across nodes only, nvls
  // to all-reduce inside a node of a cluster with NVLink SHARP (others fall back to ring).
  double time(OpClass op_class, Bytes bytes, const CommGroup& group, CollectiveAlgorithm algorithm) const;

 private:
  // NVLink inside a node, at the speed of the slowest NVLink among the nodes where `group` has
  // several members.
  double nvlink_bandwidth(const CommGroup& group) const;
  // One GPU's share of its node's NICs, at the speed of the slowest node `group` touches.
  double gpu_network_bandwidth(const CommGroup& group) const;
  // Bandwidth at which a ring over `group` moves each rank's share: NVLink inside a node, the
  // NICs of the node's members when it crosses nodes.
  double ring_bandwidth(const CommGroup& group) const;
  double step_latency(const CommGroup& group) const;
  // NCCL's tuner time of `algorithm` with its fastest protocol.
  double nccl_time(OpClass op_class, Bytes bytes, const CommGroup& group, NcclAlgorithm algorithm) const;
  bool runs_nvls(OpClass op_class, const CommGroup& group) const;
  double nvls_time(Bytes bytes, const CommGroup& group) const;

  const ClusterSpec& cluster_;
};

}  // namespace weft
