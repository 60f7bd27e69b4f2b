#pragma once

#include <cstddef>
#include <limits>
#include <span>
#include <vector>

#include "simulator/core/units.hpp"

namespace weft::dip {

// One pipeline stage of a stage flow (papers/001 §5): the forward or backward pass of one model
// chunk for one (sub-)microbatch, on one pipeline rank.
struct PipelineStage {
  static constexpr std::size_t kNone = std::numeric_limits<std::size_t>::max();

  int rank = 0;
  bool backward = false;
  TimeNs duration = 0;
  // A forward stage holds these activation bytes on its rank from its start until the backward
  // stage that names it in `frees` ends.
  Bytes memory = 0;
  std::size_t frees = kNone;  // for a backward stage: the forward stage whose bytes it frees
  // Among a rank's stages of one kind, larger priorities go first (§6.1 assigns them).
  int priority = 0;
  std::vector<std::size_t> predecessors;  // stages that must end before this one starts
  // Per predecessor, how long after its end what it hands on reaches this stage's rank (a
  // transfer between ranks); empty: at once.
  std::vector<TimeNs> arrival = {};
};

// A schedule of stages on their ranks: per rank the order, per stage its times.
struct StageSchedule {
  std::vector<std::vector<std::size_t>> order;  // per rank, stage indices in the order they run
  std::vector<TimeNs> start;                    // per stage
  std::vector<TimeNs> end;
  std::vector<Bytes> peak_memory;  // per rank
  TimeNs makespan = 0;
};

// PipeWeaver's dual-queue interleaving (papers/001 §6.2). Each rank keeps the end of its last
// stage and a forward and a backward queue ordered by priority; a stage may start once its
// predecessors have ended and what they hand on has arrived. A queue's head is its first stage whose predecessors have
// all been scheduled: until then a stage's t_start is infinite, and it does not hold back the stages behind it (a
// segment waiting for its previous one on another rank lets the rank run the next group meanwhile). Repeatedly, the
// rank that could start a queue head earliest (the later of the head's ready time and the end of the rank's last stage:
// the paper's t_min, read as when the rank could start it) schedules one of them: when both heads are ready by the time
// the rank is free, the kind other than the rank's last stage's (one forward, one backward, as
// Megatron's 1F1B), else the one ready first. A rank whose next forward would take its memory
// past `memory_limit` (per rank; 0 for none) schedules only backward stages until enough is
// freed. Ties between ranks go to the lower rank; between kinds, to backward.
// `priorities`, when given, replaces the stages' own (one per stage).
// Throws InputError when no stage can be scheduled any more: the memory limit is too small for
// the stages' activations, or the dependencies form a cycle.
StageSchedule interleave_stages(std::span<const PipelineStage> stages, int ranks, Bytes memory_limit = 0,
                                std::span<const int> priorities = {});

// The times and peaks of running each rank's stages in the given order, each as soon as its rank
// and its predecessors allow (the same rules as interleave_stages). Throws InputError when the
// orders deadlock.
StageSchedule time_stage_orders(std::span<const PipelineStage> stages,
                                const std::vector<std::vector<std::size_t>>& order);

}  // namespace weft::dip
