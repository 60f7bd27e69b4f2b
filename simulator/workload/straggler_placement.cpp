#include "simulator/workload/straggler_placement.hpp"

#include <map>
#include <string>
#include <utility>

#include "simulator/core/input_error.hpp"

namespace weft {
namespace {

// The range of one coordinate a simulated rank stands for.
std::pair<int, int> span_of(bool folded, int own, int size) {
  return folded ? std::pair{0, size} : std::pair{own, own + 1};
}

}  // namespace

DeviceSpec at_speed(DeviceSpec gpu, double speed) {
  gpu.speed = speed;
  return gpu;
}

PaceSetter pace_setter(const ClusterSpec& cluster, const ParallelDims& dims, const RankCoordinates& c,
                       const FoldedDimensions& folded) {
  PaceSetter slowest;
  if (!cluster.stragglers && cluster.node_groups.empty()) return slowest;
  std::int64_t first_gpu = -1;
  const auto [tp_begin, tp_end] = span_of(folded.tp, c.tp, dims.tp_at(c.pp));
  const auto [cp_begin, cp_end] = span_of(folded.cp, c.cp, dims.cp);
  const auto [dp_begin, dp_end] = span_of(folded.dp, c.dp, dims.dp_at(c.pp));
  for (int dp = dp_begin; dp < dp_end; ++dp) {
    for (int cp = cp_begin; cp < cp_end; ++cp) {
      for (int tp = tp_begin; tp < tp_end; ++tp) {
        const std::int64_t gpu = dims.rank_of({tp, cp, dp, c.pp});
        const int group = cluster.node_group_of(gpu);
        if (first_gpu < 0) {
          first_gpu = gpu;
          slowest.node_group = group;
        } else if (group != slowest.node_group) {
          throw InputError("cluster.node_groups: GPUs " + std::to_string(first_gpu) + " (" +
                           cluster.gpu_of_group(slowest.node_group).name + ") and " + std::to_string(gpu) + " (" +
                           cluster.gpu_of_group(group).name + ") are in one " + dims.label_of(c) +
                           "'s TP and CP groups, which a folded simulation runs as one: place the node groups so "
                           "that no TP or CP group crosses them, or simulate with --unfold");
        }
        const double speed = cluster.gpu_speed(gpu);
        if (speed < slowest.speed) {
          slowest.speed = speed;
          slowest.gpu = gpu;
        }
      }
    }
  }
  return slowest;
}

std::pair<double, double> slowest_links(const ClusterSpec& cluster, const ParallelDims& dims, int dp, int pp) {
  double nic = 1.0;
  double nvlink = 1.0;
  for (int cp = 0; cp < dims.cp; ++cp) {
    for (int tp = 0; tp < dims.tp_at(pp); ++tp) {
      const std::int64_t node = dims.rank_of({tp, cp, dp, pp}) / cluster.gpus_per_node;
      nic = std::min(nic, cluster.nic_speed(node));
      nvlink = std::min(nvlink, cluster.nvlink_speed(node));
    }
  }
  return {nic, nvlink};
}

std::vector<int> distinct_replicas(const ClusterSpec& cluster, const ParallelDims& dims) {
  if (!cluster.stragglers && cluster.node_groups.empty()) return {0};
  std::map<std::vector<double>, int> first_of;
  std::vector<int> replicas;
  for (int dp = 0; dp < dims.dp; ++dp) {
    std::vector<double> pace;
    for (int pp = 0; pp < dims.pp; ++pp) {
      const auto [nic, nvlink] = slowest_links(cluster, dims, dp, pp);
      const PaceSetter slowest = pace_setter(cluster, dims, {0, 0, dp, pp}, {true, true, false});
      pace.push_back(slowest.speed);
      pace.push_back(static_cast<double>(slowest.node_group));
      pace.push_back(nic);
      pace.push_back(nvlink);
    }
    if (first_of.emplace(std::move(pace), dp).second) replicas.push_back(dp);
  }
  return replicas;
}

}  // namespace weft
