#include "simulator/plan/execution_plan.hpp"

#include <algorithm>

namespace weft {
namespace {

// DFLOP's communicator rank (papers/003 §4, "a single predetermined rank within the modality
// encoder's data group"): the first rank of the encoder's side of the boundary, the earlier stage.
RankCoordinates relay_rank(const RankCoordinates& c, int stage, int peer_stage) {
  return {0, c.cp, 0, std::min(stage, peer_stage)};
}

// The bytes of replica `dp` of a mesh of `replicas`: its entry of `by_replica`, or without one
// an even share of the slot's `slot_bytes`.
std::int64_t replica_bytes(const std::vector<std::int64_t>& by_replica, int dp, int replicas, std::int64_t slot_bytes) {
  return by_replica.empty() ? slot_bytes / replicas : by_replica[static_cast<std::size_t>(dp)];
}

// The relay's messages on the rank at `c` for `action`, a transfer of the slot from stage `from`
// to stage `to`, for the forward activation and the backward gradient alike: the sending mesh's
// replicas give their shares (from their tp 0 rank) to the communicator, which then hands each
// receiving rank its replica's part.
std::vector<TransferMessage> relay_messages(const ParallelDims& dims, const RankCoordinates& c, int from, int to,
                                            const PlanAction& action) {
  const RankCoordinates relay = relay_rank(c, from, to);
  const int relay_id = static_cast<int>(dims.rank_of(relay));
  const int own = static_cast<int>(dims.rank_of(c));
  const std::int64_t slot_bytes = action.bytes / 2;
  auto share = [&](int dp) { return replica_bytes(action.relay_shares, dp, dims.dp_at(from), slot_bytes); };
  auto part = [&](int dp) { return replica_bytes(action.relay_parts, dp, dims.dp_at(to), slot_bytes); };
  std::vector<TransferMessage> messages;
  if (own == relay_id) {
    for (int dp = 0; dp < dims.dp_at(from); ++dp) {
      const int giver = static_cast<int>(dims.rank_of({0, c.cp, dp, from}));
      if (giver != own) messages.push_back({giver, share(dp), false, false});
    }
    for (int dp = 0; dp < dims.dp_at(to); ++dp) {
      for (int tp = 0; tp < dims.tp_at(to); ++tp) {
        const int taker = static_cast<int>(dims.rank_of({tp, c.cp, dp, to}));
        if (taker != own) messages.push_back({taker, part(dp), true, true});
      }
    }
    return messages;
  }
  if (c.pp == from && c.tp == 0) messages.push_back({relay_id, share(c.dp), true, false});
  if (c.pp == to) messages.push_back({relay_id, part(c.dp), false, false});
  return messages;
}

}  // namespace

bool plan_relays(const ParallelDims& dims, int stage, int peer_stage) {
  return dims.dp_at(stage) != dims.dp_at(peer_stage);
}

std::vector<int> plan_transfer_peers(const ExecutionPlan& plan, const RankCoordinates& c, int peer_stage, bool sends) {
  const ParallelDims& dims = plan.dims;
  const int own_tp = dims.tp_at(c.pp);
  const int peer_tp = dims.tp_at(peer_stage);
  auto rank = [&](int tp) { return static_cast<int>(dims.rank_of({tp, c.cp, c.dp, peer_stage})); };
  if (!sends) return {rank(c.tp % peer_tp)};
  std::vector<int> peers;
  for (int tp = c.tp; tp < peer_tp; tp += own_tp) peers.push_back(rank(tp));
  return peers;
}

std::vector<TransferMessage> plan_transfer_messages(const ExecutionPlan& plan, const RankCoordinates& c,
                                                    const PlanAction& action) {
  const bool sends = action.kind == ActionKind::isend;
  if (plan_relays(plan.dims, c.pp, action.peer_stage)) {
    return relay_messages(plan.dims, c, sends ? c.pp : action.peer_stage, sends ? action.peer_stage : c.pp, action);
  }
  std::vector<TransferMessage> messages;
  for (int peer : plan_transfer_peers(plan, c, action.peer_stage, sends)) {
    messages.push_back({peer, action.bytes, sends, false});
  }
  return messages;
}

}  // namespace weft
