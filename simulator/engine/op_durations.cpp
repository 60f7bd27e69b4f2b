#include "simulator/engine/op_durations.hpp"

#include <algorithm>
#include <stdexcept>

#include "simulator/core/input_error.hpp"

namespace weft {

OpDurations::OpDurations(const Graph& graph, const CostModel& cost_model)
    : graph_(graph),
      cost_model_(cost_model),
      spec_count_(graph.device_spec_count()),
      table_(graph.work_count() * graph.device_spec_count(), -1) {
  // Per device spec a host-issued stream runs on: each class's host time, and whether any is not 0.
  std::vector<char> spec_host_issues(spec_count_, 0);
  std::vector<char> spec_costed(spec_count_, 0);
  for (std::size_t s = 0; s < graph.stream_count(); ++s) {
    const StreamInfo& stream = graph.stream(StreamId::at(s));
    const DeviceSpecId spec = graph.device(stream.device).spec;
    stream_spec_.push_back(spec);
    if (!stream.host_issued || spec_costed[spec.value()]) continue;
    spec_costed[spec.value()] = 1;
    if (host_issue_.empty()) host_issue_.assign(spec_count_ * kOpClassCount, 0);
    for (std::size_t c = 0; c < kOpClassCount; ++c) {
      const auto op_class = static_cast<OpClass>(c);
      if (op_class == OpClass::barrier) continue;
      const TimeNs host = cost_model.host_issue_ns(op_class, graph.spec(spec));
      if (host < 0) throw std::logic_error("cost model returned a negative host issue time");
      host_issue_[spec.value() * kOpClassCount + c] = host;
      spec_host_issues[spec.value()] = spec_host_issues[spec.value()] || host > 0;
    }
  }
  for (std::size_t s = 0; s < graph.stream_count(); ++s) {
    const bool issued = graph.stream(StreamId::at(s)).host_issued && spec_host_issues[stream_spec_[s].value()];
    host_issued_.push_back(issued ? 1 : 0);
    any_host_issue_ = any_host_issue_ || issued;
  }
  for (std::size_t s = 0; s < graph.stream_count(); ++s) {
    if (!graph.stream(StreamId::at(s)).host_issued) continue;
    const TimeNs gap = cost_model.kernel_gap_ns(graph.spec(stream_spec_[s]));
    if (gap < 0) throw std::logic_error("cost model returned a negative kernel gap");
    if (gap == 0) continue;
    if (kernel_gap_.empty()) kernel_gap_.assign(graph.stream_count(), 0);
    kernel_gap_[s] = gap;
  }
}

TimeNs OpDurations::of_collective(CollectiveId collective) const {
  TimeNs longest = 0;
  for (OpId member : graph_.collective_members(collective)) longest = std::max(longest, (*this)(member));
  return longest;
}

TimeNs OpDurations::cost(OpId op, std::size_t index) const {
  const OpRecord& record = graph_.op(op);
  if (graph_.work(record.work).op_class == OpClass::barrier) return table_[index] = 0;
  try {
    table_[index] = cost_model_.duration(graph_.work(record.work), graph_.spec(stream_spec_[record.stream.value()]));
  } catch (const InputError& error) {
    throw InputError("op '" + graph_.display_name(op) + "' on device '" + graph_.device(graph_.op_device(op)).name +
                     "': " + error.what());
  }
  if (table_[index] < 0) throw std::logic_error("cost model returned a negative duration");
  return table_[index];
}

}  // namespace weft
