#pragma once

#include <cstdint>
#include <span>
#include <string>

#include "cost_models/cluster_spec.hpp"
#include "simulator/core/enum_names.hpp"

namespace weft {

// Which parallel dimension a communicator serves; reports group exposed communication by it.
enum class CommGroupKind : std::uint8_t { tp, cp, dp, pp, embedding };

inline constexpr EnumNames<CommGroupKind, 5> kCommGroupKindNames({"tp", "cp", "dp", "pp", "embedding"});
inline constexpr std::size_t kCommGroupKindCount = kCommGroupKindNames.size();

// The placement of a communicator's ranks on the cluster, which is all a collective's cost
// depends on besides the message size.
struct CommGroup {
  CommGroupKind kind = CommGroupKind::tp;
  int size = 1;            // ranks in the group
  int ranks_per_node = 1;  // members on the busiest node the group touches
  int nodes = 1;           // nodes the group spans
  // Across nodes: the fraction of its NICs' bandwidth the slowest node the group touches
  // delivers (stragglers.hpp); 1 within a node.
  double network_speed = 1.0;
  // On the nodes where the group has several members: the fraction of its NVLink bandwidth the
  // slowest of them delivers (stragglers.hpp); 1 with one member per node.
  double nvlink_speed = 1.0;

  bool operator==(const CommGroup&) const = default;
};

// A placement as people read it: "8 ranks" (one node), "16 ranks, 8 per node".
std::string placement_text(int group_size, int ranks_per_node);

// The placement of `ranks` (global ranks, nodes of cluster.gpus_per_node consecutive ranks).
CommGroup make_comm_group(CommGroupKind kind, std::span<const std::int64_t> ranks, const ClusterSpec& cluster);

}  // namespace weft
