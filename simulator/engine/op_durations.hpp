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

  // The host's time to issue `op`: zero unless its stream is host-issued (a barrier issues nothing).
  TimeNs host_issue(OpId op) const {
    const OpRecord& record = graph_.op(op);
    if (!host_issued_[record.stream.value()]) return 0;
    const auto op_class = static_cast<std::size_t>(graph_.work(record.work).op_class);
    return host_issue_[stream_spec_[record.stream.value()].value() * kOpClassCount + op_class];
  }
  // Whether a host issues `stream`'s ops and takes time for some of them.
  bool host_issued(StreamId stream) const { return host_issued_[stream.value()] != 0; }
  bool any_host_issue() const { return any_host_issue_; }
  // How long after the op before it on `stream` ends its next op may start: the device's gap
  // between kernels on a host-issued stream, zero elsewhere.
  TimeNs kernel_gap(StreamId stream) const { return kernel_gap_.empty() ? 0 : kernel_gap_[stream.value()]; }

 private:
  TimeNs cost(OpId op, std::size_t index) const;

  const Graph& graph_;
  const CostModel& cost_model_;
  std::size_t spec_count_;
  std::vector<DeviceSpecId> stream_spec_;  // by stream id
  std::vector<char> host_issued_;          // by stream id
  std::vector<TimeNs> host_issue_;         // by device spec id * kOpClassCount + op class
  bool any_host_issue_ = false;
  std::vector<TimeNs> kernel_gap_;     // by stream id; empty where every gap is zero
  mutable std::vector<TimeNs> table_;  // by work id * spec count + spec id; -1 until costed
};

}  // namespace weft
