#include "cost_models/comm_group.hpp"

#include <algorithm>
#include <map>

namespace weft {

std::string placement_text(int group_size, int ranks_per_node) {
  if (ranks_per_node >= group_size) return std::to_string(group_size) + " ranks";
  return std::to_string(group_size) + " ranks, " + std::to_string(ranks_per_node) + " per node";
}

CommGroup make_comm_group(CommGroupKind kind, std::span<const std::int64_t> ranks, const ClusterSpec& cluster) {
  std::map<std::int64_t, int> per_node;
  for (std::int64_t rank : ranks) ++per_node[rank / cluster.gpus_per_node];
  CommGroup group;
  group.kind = kind;
  group.size = static_cast<int>(ranks.size());
  group.nodes = static_cast<int>(per_node.size());
  for (const auto& [node, count] : per_node) {
    group.ranks_per_node = std::max(group.ranks_per_node, count);
    if (group.nodes > 1) group.network_speed = std::min(group.network_speed, cluster.nic_speed(node));
    if (count > 1) group.nvlink_speed = std::min(group.nvlink_speed, cluster.nvlink_speed(node));
  }
  return group;
}

}  // namespace weft
