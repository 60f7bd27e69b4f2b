// Each rank's actions from a timed stage schedule, by hand on a two-rank pipeline of one
// microbatch.
#include "simulator/planner/dip/rank_actions.hpp"

#include <catch2/catch.hpp>

namespace weft::dip {
namespace {

TEST_CASE("stages and transfers in the order each rank runs them", "[dip][plan-actions]") {
  // A (rank 0 forward, 3) -> B (rank 1 forward, 4) -> C (rank 1 backward, 5) -> D (rank 0 backward, 6).
  const std::vector<PipelineStage> stages = {
      {0, false, 3, 1, PipelineStage::kNone, 0, {}},
      {1, false, 4, 1, PipelineStage::kNone, 0, {0}},
      {1, true, 5, 0, 1, 0, {1}},
      {0, true, 6, 0, 0, 0, {2}},
  };
  const StageSchedule schedule = time_stage_orders(stages, {{0, 3}, {1, 2}});
  REQUIRE(schedule.makespan == 18);
  const auto ranks = rank_actions(stages, schedule);
  REQUIRE(ranks.size() == 2);
  using K = ActionKind;
  auto kinds = [](const std::vector<RankAction>& actions) {
    std::vector<K> out;
    for (const RankAction& a : actions) out.push_back(a.kind);
    return out;
  };
  // Rank 0: A; its output sent at 3; the send waited for once B ended (7); the gradient received
  // just before D (12); D.
  CHECK(kinds(ranks[0]) ==
        std::vector<K>{K::forward_stage, K::isend, K::wait_isend, K::irecv, K::wait_irecv, K::backward_stage});
  // Rank 1: A's output received before B (3); B; C; C's gradient sent at 12, waited for once D
  // ended (18).
  CHECK(kinds(ranks[1]) ==
        std::vector<K>{K::irecv, K::wait_irecv, K::forward_stage, K::backward_stage, K::isend, K::wait_isend});
  CHECK(ranks[0][0].stage == 0);
  CHECK(ranks[0][5].stage == 3);
  CHECK(ranks[1][2].stage == 1);
  CHECK(ranks[1][3].stage == 2);
  // Transfer 0 carries A to B, transfer 1 C to D; each end names the other rank.
  CHECK(ranks[0][1].transfer == 0);
  CHECK(ranks[0][1].peer == 1);
  CHECK(ranks[1][0].transfer == 0);
  CHECK(ranks[1][0].peer == 0);
  CHECK(ranks[1][0].producer == 0);
  CHECK(ranks[1][0].consumer == 1);
  CHECK(ranks[0][3].transfer == 1);
  CHECK(ranks[0][3].producer == 2);
  CHECK(ranks[0][3].consumer == 3);
  CHECK(ranks[1][4].transfer == 1);
}

TEST_CASE("a send leaves before the stage that starts as its producer ends", "[dip][plan-actions]") {
  // A (rank 0, 3) feeds B (rank 1); E (rank 0, 2) starts at 3, when A ends. A rank issues its
  // actions in turn: the isend must come before E, or it would wait for E to finish.
  const std::vector<PipelineStage> stages = {
      {0, false, 3, 1, PipelineStage::kNone, 0, {}},
      {1, false, 4, 1, PipelineStage::kNone, 0, {0}},
      {0, false, 2, 1, PipelineStage::kNone, 0, {}},
  };
  const StageSchedule schedule = time_stage_orders(stages, {{0, 2}, {1}});
  REQUIRE(schedule.start[2] == schedule.end[0]);
  const auto ranks = rank_actions(stages, schedule);
  REQUIRE(ranks[0].size() == 4);
  CHECK(ranks[0][0].kind == ActionKind::forward_stage);
  CHECK(ranks[0][1].kind == ActionKind::isend);
  CHECK(ranks[0][2].kind == ActionKind::forward_stage);
  CHECK(ranks[0][2].stage == 2);
  CHECK(ranks[0][3].kind == ActionKind::wait_isend);
}

}  // namespace
}  // namespace weft::dip
