#include <catch2/catch.hpp>

#include "simulator/plan/execution_plan.hpp"

namespace weft {
namespace {

// Two stages on meshes of their own: stage 0 of `first`, stage 1 of `second`.
ExecutionPlan two_meshes(PositionMesh first, PositionMesh second) {
  ExecutionPlan plan;
  plan.dims = {second.tp, 1, second.dp, 2, {first, second}};
  return plan;
}

PlanAction launch(ActionKind kind, int peer_stage, std::int64_t bytes) {
  PlanAction action;
  action.kind = kind;
  action.peer_stage = peer_stage;
  action.bytes = bytes;
  return action;
}

using Messages = std::vector<TransferMessage>;

TEST_CASE("between meshes of one DP a receiver at tp j takes its copy from the sender at tp j mod its TP",
          "[plan][meshes]") {
  // Stage 0: TP1 x DP2 (ranks 0, 1); stage 1: TP2 x DP2 (ranks 2, 3 of replica 0; 4, 5 of replica 1).
  const ExecutionPlan plan = two_meshes({1, 2}, {2, 2});
  CHECK(plan_transfer_peers(plan, {0, 0, 1, 0}, 1, true) == std::vector<int>{4, 5});
  CHECK(plan_transfer_peers(plan, {1, 0, 1, 1}, 0, false) == std::vector<int>{1});
  CHECK(plan_transfer_peers(plan, {0, 0, 1, 1}, 0, true) == std::vector<int>{1});
  CHECK(plan_transfer_peers(plan, {1, 0, 1, 1}, 0, true).empty());
  CHECK_FALSE(plan_relays(plan.dims, 0, 1));
  CHECK(plan_transfer_messages(plan, {0, 0, 1, 0}, launch(ActionKind::isend, 1, 100)) ==
        Messages{{4, 100, true, false}, {5, 100, true, false}});
}

TEST_CASE("DFLOP's communicator gathers a slot from one mesh's replicas and scatters it to the other's",
          "[plan][meshes]") {
  // The encoder on TP1 x DP2 (ranks 0 and 1), the LLM on TP2 x DP1 (ranks 2 and 3); a slot of
  // S = 8,192 bytes, so the transfer's bytes (what crosses the communicator, rank 0) are 2S.
  const ExecutionPlan plan = two_meshes({1, 2}, {2, 1});
  REQUIRE(plan_relays(plan.dims, 0, 1));
  const std::int64_t slot = 8192;
  const PlanAction forward_send = launch(ActionKind::isend, 1, 2 * slot);
  const PlanAction forward_receive = launch(ActionKind::irecv, 0, 2 * slot);
  // Forward: replica 1 gives its half to rank 0, which, once it has it, sends the whole slot (the
  // LLM's one replica) to both of the LLM's TP ranks.
  CHECK(plan_transfer_messages(plan, {0, 0, 0, 0}, forward_send) ==
        Messages{{1, slot / 2, false, false}, {2, slot, true, true}, {3, slot, true, true}});
  CHECK(plan_transfer_messages(plan, {0, 0, 1, 0}, forward_send) == Messages{{0, slot / 2, true, false}});
  CHECK(plan_transfer_messages(plan, {0, 0, 0, 1}, forward_receive) == Messages{{0, slot, false, false}});
  CHECK(plan_transfer_messages(plan, {1, 0, 0, 1}, forward_receive) == Messages{{0, slot, false, false}});
  // Backward: the LLM's tp 0 rank gives the gradient to rank 0, which hands replica 1 its half;
  // the LLM's tp 1 rank, which holds the same gradient, sends nothing.
  const PlanAction backward_send = launch(ActionKind::isend, 0, 2 * slot);
  const PlanAction backward_receive = launch(ActionKind::irecv, 1, 2 * slot);
  CHECK(plan_transfer_messages(plan, {0, 0, 0, 1}, backward_send) == Messages{{0, slot, true, false}});
  CHECK(plan_transfer_messages(plan, {1, 0, 0, 1}, backward_send).empty());
  CHECK(plan_transfer_messages(plan, {0, 0, 0, 0}, backward_receive) ==
        Messages{{2, slot, false, false}, {1, slot / 2, true, true}});
  CHECK(plan_transfer_messages(plan, {0, 0, 1, 0}, backward_receive) == Messages{{0, slot / 2, false, false}});
}

TEST_CASE("an encoder of more TP ranks gathers from each replica's tp 0 and hands every rank its part",
          "[plan][meshes]") {
  // The encoder on TP2 x DP1 (ranks 0, 1), the LLM on TP1 x DP2 (ranks 2, 3): the communicator is
  // rank 0, which has the whole slot; rank 1 (its TP peer, same output) sends nothing.
  const ExecutionPlan plan = two_meshes({2, 1}, {1, 2});
  const std::int64_t slot = 4096;
  CHECK(plan_transfer_messages(plan, {0, 0, 0, 0}, launch(ActionKind::isend, 1, 2 * slot)) ==
        Messages{{2, slot / 2, true, true}, {3, slot / 2, true, true}});
  CHECK(plan_transfer_messages(plan, {1, 0, 0, 0}, launch(ActionKind::isend, 1, 2 * slot)).empty());
  // Back: each LLM replica's half to rank 0, which hands rank 1 the whole slot's gradient.
  CHECK(plan_transfer_messages(plan, {0, 0, 1, 1}, launch(ActionKind::isend, 0, 2 * slot)) ==
        Messages{{0, slot / 2, true, false}});
  CHECK(plan_transfer_messages(plan, {0, 0, 0, 0}, launch(ActionKind::irecv, 1, 2 * slot)) ==
        Messages{{2, slot / 2, false, false}, {3, slot / 2, false, false}, {1, slot, true, true}});
}

TEST_CASE("on per-sample data the communicator's messages carry each replica's own share and part",
          "[plan][meshes][data]") {
  // The encoder on TP1 x DP3 (ranks 0, 1, 2), the LLM on TP2 x DP1 (ranks 3, 4): a slot of 5
  // images of 1,000 bytes dealt 2, 2, 1 over the encoder's replicas.
  const ExecutionPlan plan = two_meshes({1, 3}, {2, 1});
  PlanAction forward = launch(ActionKind::isend, 1, 2 * 5000);
  forward.relay_shares = {2000, 2000, 1000};
  forward.relay_parts = {5000};
  CHECK(plan_transfer_messages(plan, {0, 0, 0, 0}, forward) ==
        Messages{{1, 2000, false, false}, {2, 1000, false, false}, {3, 5000, true, true}, {4, 5000, true, true}});
  CHECK(plan_transfer_messages(plan, {0, 0, 2, 0}, forward) == Messages{{0, 1000, true, false}});
  // Back: rank 0 hands each replica its images' gradient.
  PlanAction backward = launch(ActionKind::irecv, 1, 2 * 5000);
  backward.relay_shares = {5000};
  backward.relay_parts = {2000, 2000, 1000};
  CHECK(plan_transfer_messages(plan, {0, 0, 0, 0}, backward) ==
        Messages{{3, 5000, false, false}, {1, 2000, true, true}, {2, 1000, true, true}});
  CHECK(plan_transfer_messages(plan, {0, 0, 2, 0}, backward) == Messages{{0, 1000, false, false}});
}

}  // namespace
}  // namespace weft
