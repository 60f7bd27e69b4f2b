#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "simulator/plan/execution_plan.hpp"
#include "simulator/planner/dip/stage_interleaving.hpp"

namespace weft::dip {

// One action of a pipeline rank (papers/001 Table 2): a stage, or one end of a transfer between
// a stage and a successor on another rank.
struct RankAction {
  ActionKind kind = ActionKind::forward_stage;
  std::size_t stage = 0;       // stage actions: the stage; transfers: the stage on this rank
  std::uint32_t transfer = 0;  // transfers: shared by the four actions of one transfer
  int peer = -1;               // transfers: the pipeline rank at the other end
  std::size_t producer = 0;    // transfers: the stage whose output it carries
  std::size_t consumer = 0;    // transfers: the stage that reads it

  bool is_stage() const { return kind == ActionKind::forward_stage || kind == ActionKind::backward_stage; }
};

// Each pipeline rank's actions in the order it runs them, from a timed schedule: its stages in
// their order; for every predecessor on another rank, an isend on the sender and an irecv on the
// receiver when the producer ends (the receive posted early, so that the transfer can proceed
// while the receiver computes), a wait_irecv just before the consumer starts, and a wait_isend
// once the consumer has ended (every wait comes, in simulated time, after what it waits for). At
// one instant launches (sends and receives) go first, then waits, then the stage that starts: a
// rank issues its actions one after another, so a send placed after a stage starting at the
// same instant would leave only once that stage is done.
std::vector<std::vector<RankAction>> rank_actions(std::span<const PipelineStage> stages, const StageSchedule& schedule);

}  // namespace weft::dip
