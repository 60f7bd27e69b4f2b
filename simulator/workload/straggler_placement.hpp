#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "cost_models/cluster_spec.hpp"
#include "cost_models/parallel_dims.hpp"

namespace weft {

// Where a cluster's stragglers (cost_models/stragglers.hpp) fall on a plan's ranks, for a
// simulation that folds ranks (docs/stragglers.md). A folded rank stands for several GPUs that
// synchronise at every collective of theirs (a TP or CP group), or that run the same work (DP
// replicas): it runs at the pace of the slowest of them.

// `gpu` running at `speed` of its healthy rate.
DeviceSpec at_speed(DeviceSpec gpu, double speed);

// Which GPUs a simulated rank at `c` stands for: its own coordinate in each dimension not
// folded, every coordinate in a folded one.
struct FoldedDimensions {
  bool tp = true;
  bool cp = true;
  bool dp = true;
};

// The slowest GPU a simulated rank stands for, and its speed (1 and GPU -1 when none is slow); and
// the node group of the GPUs it stands for (-1: the cluster's own GPU type).
struct PaceSetter {
  double speed = 1.0;
  std::int64_t gpu = -1;
  int node_group = -1;
};

// Throws InputError when the GPUs a simulated rank stands for are of different types (a TP or CP
// group across node groups).
PaceSetter pace_setter(const ClusterSpec& cluster, const ParallelDims& dims, const RankCoordinates& c,
                       const FoldedDimensions& folded);

// The DP replicas a simulation with TP and CP folded must keep apart: one (the first) for each
// distinct sequence, over the pipeline stages, of the GPU type, the speed of the replica's
// slowest GPU and those of the slowest NIC and NVLink of its nodes. Replicas of one sequence run alike, so simulating
// one of them stands for all. A single entry (replica 0) when the replicas do not differ.
// The slowest NIC and the slowest NVLink among the nodes of the TP and CP ranks of pipeline
// position `pp` in DP replica `dp`.
std::pair<double, double> slowest_links(const ClusterSpec& cluster, const ParallelDims& dims, int dp, int pp);

std::vector<int> distinct_replicas(const ClusterSpec& cluster, const ParallelDims& dims);

}  // namespace weft
