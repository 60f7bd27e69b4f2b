#include "simulator/planner/dip/stage_interleaving.hpp"

#include <algorithm>
#include <set>
#include <string>

#include "simulator/core/input_error.hpp"

namespace weft::dip {
namespace {

constexpr TimeNs kNever = std::numeric_limits<TimeNs>::max();

void check_stages(std::span<const PipelineStage> stages, int ranks) {
  for (std::size_t i = 0; i < stages.size(); ++i) {
    const PipelineStage& stage = stages[i];
    const std::string where = "stage " + std::to_string(i) + ": ";
    if (stage.rank < 0 || stage.rank >= ranks) throw InputError(where + "rank out of range");
    if (stage.duration < 0 || stage.memory < 0) throw InputError(where + "negative duration or memory");
    for (std::size_t p : stage.predecessors) {
      if (p >= stages.size() || p == i) throw InputError(where + "unknown predecessor");
    }
    if (!stage.arrival.empty() && stage.arrival.size() != stage.predecessors.size())
      throw InputError(where + "arrival times do not match the predecessors");
    if (stage.frees == PipelineStage::kNone) continue;
    if (!stage.backward || stage.frees >= stages.size() || stages[stage.frees].backward ||
        stages[stage.frees].rank != stage.rank) {
      throw InputError(where + "frees what is not a forward stage of its rank");
    }
  }
}

// Stages whose predecessors have all ended (and whose inputs have arrived), and when they could
// start.
class Readiness {
 public:
  explicit Readiness(std::span<const PipelineStage> stages) : waiting_(stages.size()), ready_at_(stages.size(), 0) {
    successors_.resize(stages.size());
    for (std::size_t i = 0; i < stages.size(); ++i) {
      waiting_[i] = stages[i].predecessors.size();
      for (std::size_t k = 0; k < stages[i].predecessors.size(); ++k) {
        const TimeNs arrival = stages[i].arrival.empty() ? 0 : stages[i].arrival[k];
        successors_[stages[i].predecessors[k]].push_back({i, arrival});
      }
    }
  }
  // When `stage` could start, or kNever while a predecessor is unscheduled.
  TimeNs start(std::size_t stage) const { return waiting_[stage] == 0 ? ready_at_[stage] : kNever; }
  void ended(std::size_t stage, TimeNs end) {
    for (const Successor& successor : successors_[stage]) {
      --waiting_[successor.stage];
      ready_at_[successor.stage] = std::max(ready_at_[successor.stage], end + successor.arrival);
    }
  }
  template <class Visit>
  void for_each_successor(std::size_t stage, Visit&& visit) const {
    for (const Successor& successor : successors_[stage]) visit(successor.stage);
  }

 private:
  struct Successor {
    std::size_t stage = 0;
    TimeNs arrival = 0;
  };
  std::vector<std::size_t> waiting_;
  std::vector<TimeNs> ready_at_;
  std::vector<std::vector<Successor>> successors_;
};

// Per rank: the held bytes after each stage in the order they run; the peak is at a forward's
// start, when every earlier stage of the rank has ended.
std::vector<Bytes> peaks(std::span<const PipelineStage> stages, const std::vector<std::vector<std::size_t>>& order) {
  std::vector<Bytes> peak(order.size(), 0);
  for (std::size_t r = 0; r < order.size(); ++r) {
    Bytes held = 0;
    for (std::size_t i : order[r]) {
      if (stages[i].backward) {
        if (stages[i].frees != PipelineStage::kNone) held -= stages[stages[i].frees].memory;
      } else {
        held += stages[i].memory;
        peak[r] = std::max(peak[r], held);
      }
    }
  }
  return peak;
}

StageSchedule empty_schedule(std::size_t stages, std::size_t ranks) {
  StageSchedule schedule;
  schedule.order.resize(ranks);
  schedule.start.assign(stages, 0);
  schedule.end.assign(stages, 0);
  return schedule;
}

// Runs stage `i` next on its rank, as soon as the rank is free and its predecessors have ended.
void place(StageSchedule& schedule, std::span<const PipelineStage> stages, std::size_t i, Readiness& readiness,
           std::vector<TimeNs>& last_end) {
  const auto rank = static_cast<std::size_t>(stages[i].rank);
  schedule.start[i] = std::max(last_end[rank], readiness.start(i));
  schedule.end[i] = schedule.start[i] + stages[i].duration;
  schedule.makespan = std::max(schedule.makespan, schedule.end[i]);
  schedule.order[rank].push_back(i);
  readiness.ended(i, schedule.end[i]);
  last_end[rank] = schedule.end[i];
}

}  // namespace

StageSchedule interleave_stages(std::span<const PipelineStage> stages, int ranks, Bytes memory_limit,
                                std::span<const int> priorities) {
  check_stages(stages, ranks);
  if (memory_limit < 0) throw InputError("memory limit: must be >= 0");
  if (!priorities.empty() && priorities.size() != stages.size())
    throw InputError("stage priorities: one per stage expected");
  auto priority = [&](std::size_t i) { return priorities.empty() ? stages[i].priority : priorities[i]; };
  const auto rank_count = static_cast<std::size_t>(ranks);
  // Per rank and kind, the stages by descending priority. A queue offers the first of its stages
  // whose predecessors have all been scheduled (a stage waiting for one has t_start = infinity and
  // cannot be picked, but does not hold back the stages behind it).
  std::vector<std::vector<std::size_t>> queues(2 * rank_count);
  for (std::size_t i = 0; i < stages.size(); ++i) {
    queues[2 * static_cast<std::size_t>(stages[i].rank) + (stages[i].backward ? 1 : 0)].push_back(i);
  }
  std::vector<std::size_t> queue_of(stages.size());
  std::vector<std::size_t> position(stages.size());
  for (std::size_t q = 0; q < queues.size(); ++q) {
    std::stable_sort(queues[q].begin(), queues[q].end(),
                     [&](std::size_t a, std::size_t b) { return priority(a) > priority(b); });
    for (std::size_t k = 0; k < queues[q].size(); ++k) {
      queue_of[queues[q][k]] = q;
      position[queues[q][k]] = k;
    }
  }
  std::vector<std::set<std::size_t>> offered(queues.size());  // positions of schedulable stages
  for (std::size_t i = 0; i < stages.size(); ++i) {
    if (stages[i].predecessors.empty()) offered[queue_of[i]].insert(position[i]);
  }
  std::vector<TimeNs> last_end(rank_count, 0);
  std::vector<std::uint8_t> last_backward(rank_count, 1);  // so that a rank starts with a forward
  std::vector<Bytes> held(rank_count, 0);
  Readiness readiness(stages);
  StageSchedule schedule = empty_schedule(stages.size(), rank_count);
  auto head = [&](std::size_t queue) { return queues[queue][*offered[queue].begin()]; };
  auto start_of = [&](std::size_t queue) { return offered[queue].empty() ? kNever : readiness.start(head(queue)); };
  for (std::size_t scheduled = 0; scheduled < stages.size(); ++scheduled) {
    std::size_t best_rank = rank_count;
    TimeNs best_min = kNever;
    TimeNs best_forward = kNever;
    TimeNs best_backward = kNever;
    bool memory_blocked = false;
    for (std::size_t r = 0; r < rank_count; ++r) {
      TimeNs forward = start_of(2 * r);
      if (forward != kNever && memory_limit > 0 && held[r] + stages[head(2 * r)].memory > memory_limit) {
        forward = kNever;  // the memory guard: backward stages only, until enough is freed
        memory_blocked = true;
      }
      const TimeNs backward = start_of(2 * r + 1);
      // When the rank could start its next stage: not before it is free.
      const TimeNs ready = std::min(forward, backward);
      const TimeNs earliest = ready == kNever ? kNever : std::max(last_end[r], ready);
      if (earliest < best_min) {
        best_rank = r;
        best_min = earliest;
        best_forward = forward;
        best_backward = backward;
      }
    }
    if (best_rank == rank_count) {
      throw InputError(memory_blocked ? "memory limit " + std::to_string(memory_limit) +
                                            " bytes is too small: no rank can run its next forward stage and "
                                            "nothing it holds can be freed first"
                                      : "pipeline stages deadlock: their dependencies form a cycle");
    }
    const std::size_t r = best_rank;
    bool backward = best_backward <= best_forward;
    if (best_forward <= last_end[r] && best_backward <= last_end[r]) backward = last_backward[r] == 0;
    const std::size_t queue = 2 * r + (backward ? 1 : 0);
    const std::size_t i = head(queue);
    offered[queue].erase(offered[queue].begin());
    place(schedule, stages, i, readiness, last_end);
    readiness.for_each_successor(i, [&](std::size_t successor) {
      if (readiness.start(successor) != kNever) offered[queue_of[successor]].insert(position[successor]);
    });
    last_backward[r] = backward ? 1 : 0;
    if (!backward) {
      held[r] += stages[i].memory;
    } else if (stages[i].frees != PipelineStage::kNone) {
      held[r] -= stages[stages[i].frees].memory;
    }
  }
  schedule.peak_memory = peaks(stages, schedule.order);
  return schedule;
}

StageSchedule time_stage_orders(std::span<const PipelineStage> stages,
                                const std::vector<std::vector<std::size_t>>& order) {
  check_stages(stages, static_cast<int>(order.size()));
  std::vector<std::uint8_t> listed(stages.size(), 0);
  for (std::size_t r = 0; r < order.size(); ++r) {
    for (std::size_t i : order[r]) {
      if (i >= stages.size() || static_cast<std::size_t>(stages[i].rank) != r)
        throw InputError("stage order of rank " + std::to_string(r) + ": a stage of another rank");
      if (listed[i]++ != 0) throw InputError("stage orders: stage " + std::to_string(i) + " is listed twice");
    }
  }
  if (std::find(listed.begin(), listed.end(), 0) != listed.end())
    throw InputError("stage orders: every stage must be listed once");
  Readiness readiness(stages);
  StageSchedule schedule = empty_schedule(stages.size(), order.size());
  std::vector<std::size_t> position(order.size(), 0);
  std::vector<TimeNs> last_end(order.size(), 0);
  for (std::size_t scheduled = 0; scheduled < stages.size();) {
    bool progressed = false;
    for (std::size_t r = 0; r < order.size(); ++r) {
      while (position[r] < order[r].size() && readiness.start(order[r][position[r]]) != kNever) {
        place(schedule, stages, order[r][position[r]++], readiness, last_end);
        ++scheduled;
        progressed = true;
      }
    }
    if (!progressed) throw InputError("stage orders deadlock: a stage waits for one its rank runs later");
  }
  schedule.peak_memory = peaks(stages, schedule.order);
  return schedule;
}

}  // namespace weft::dip
