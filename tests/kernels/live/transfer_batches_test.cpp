#include <catch2/catch.hpp>

#include "kernels/live/transfer_batches.hpp"

namespace weft {
namespace {

PlanAction batch_test_action(ActionKind kind, std::uint32_t transfer = 0) {
  PlanAction action;
  action.kind = kind;
  action.transfer = transfer;
  return action;
}

TEST_CASE("consecutive transfer launches form one group, in program order", "[kernels][live]") {
  // A 1F1B steady state: send the activation and receive the next gradient together, compute,
  // wait; then a lone receive; then two sends after a wait.
  const std::vector<PlanAction> actions = {
      batch_test_action(ActionKind::isend, 0),      batch_test_action(ActionKind::irecv, 1),
      batch_test_action(ActionKind::forward_stage), batch_test_action(ActionKind::irecv, 2),
      batch_test_action(ActionKind::wait_irecv, 2), batch_test_action(ActionKind::isend, 3),
      batch_test_action(ActionKind::isend, 4),      batch_test_action(ActionKind::wait_isend, 0)};
  using Batch = std::pair<std::size_t, std::size_t>;
  CHECK(transfer_batches(actions) == std::vector<Batch>{{0, 2}, {3, 4}, {5, 7}});
}

TEST_CASE("a program without transfers has no groups, and one ending in launches closes its last", "[kernels][live]") {
  CHECK(transfer_batches({batch_test_action(ActionKind::forward_stage)}).empty());
  CHECK(transfer_batches({}).empty());
  const auto batches =
      transfer_batches({batch_test_action(ActionKind::backward_stage), batch_test_action(ActionKind::irecv, 7)});
  REQUIRE(batches.size() == 1);
  CHECK(batches[0] == std::pair<std::size_t, std::size_t>{1, 2});
}

}  // namespace
}  // namespace weft
