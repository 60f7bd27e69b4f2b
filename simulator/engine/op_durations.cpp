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
  for (std::size_t s = 0; s < graph.stream_count(); ++s) {
    const StreamInfo& stream = graph.stream(StreamId::at(s));
    stream_spec_.push_back(graph.device(stream.device).spec);
    const TimeNs host = stream.host_issued ? cost_model.host_issue_ns(graph.spec(stream_spec_.back())) : 0;
    if (host < 0) throw std::logic_error("cost model returned a negative host issue time");
    host_issue_.push_back(host);
    any_host_issue_ = any_host_issue_ || host > 0;
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
