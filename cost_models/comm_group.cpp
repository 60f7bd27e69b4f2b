#include "cost_models/comm_group.hpp"

#include <algorithm>
#include <map>

namespace weft {

CommGroup make_comm_group(CommGroupKind kind, std::span<const std::int64_t> ranks, const ClusterSpec& cluster) {
  std::map<std::int64_t, int> per_node;
  for (std::int64_t rank : ranks) ++per_node[rank / cluster.gpus_per_node];
  CommGroup group;
  group.kind = kind;
  group.size = static_cast<int>(ranks.size());
  group.nodes = static_cast<int>(per_node.size());
  for (const auto& [node, count] : per_node) group.ranks_per_node = std::max(group.ranks_per_node, count);
  return group;
}

}  // namespace weft
