#pragma once

#include <string>
#include <vector>

#include "cost_models/cost_model.hpp"
#include "simulator/graph/graph.hpp"

namespace weft {

// The duration of each op on its device, from a table with one entry per (work, device spec)
// pair, filled the first time a pair is needed: identical ops are costed once and nothing is
// stored per op. A pair the cost model rejects (the device lacks a needed capacity) is an
// InputError naming the op.
class OpDurations {
 public:
  OpDurations(const Graph& graph, const CostModel& cost_model);

  TimeNs operator()(OpId op) const {
    const OpRecord& record = graph_.op(op);
    const std::size_t index = record.work.value() * spec_count_ + stream_spec_[record.stream.value()].value();
    const TimeNs duration = table_[index];
    return duration >= 0 ? duration : cost(op, index);
  }

  // A collective's members all take the longest member's time: they finish together.
  TimeNs of_collective(CollectiveId collective) const;

  // The host's time to issue an op on `stream`: zero unless the stream is host-issued.
  TimeNs host_issue(StreamId stream) const { return host_issue_[stream.value()]; }
  bool any_host_issue() const { return any_host_issue_; }

 private:
  TimeNs cost(OpId op, std::size_t index) const;

  const Graph& graph_;
  const CostModel& cost_model_;
  std::size_t spec_count_;
  std::vector<DeviceSpecId> stream_spec_;  // by stream id
  std::vector<TimeNs> host_issue_;         // by stream id
  bool any_host_issue_ = false;
  mutable std::vector<TimeNs> table_;  // by work id * spec count + spec id; -1 until costed
};

}  // namespace weft
