#include "simulator/engine/critical_path.hpp"

#include <algorithm>

namespace weft {

std::vector<OpId> find_critical_path(const SimulationResult& result) {
  if (result.op_end.empty()) return {};
  const auto last = std::max_element(result.op_end.begin(), result.op_end.end());  // first of the maxima
  std::vector<OpId> path;
  for (OpId op(static_cast<OpId::value_type>(last - result.op_end.begin())); op.valid();
       op = result.op_binding[op.value()]) {
    path.push_back(op);
  }
  std::reverse(path.begin(), path.end());
  return path;
}

CriticalPathSummary summarize_critical_path(const Graph& graph, const SimulationResult& result,
                                            std::size_t longest_count) {
  CriticalPathSummary summary;
  summary.by_device.assign(graph.device_count(), 0);
  for (OpId op : result.critical_path) {
    const TimeNs duration = result.duration(op);
    summary.length += duration;
    summary.by_category[static_cast<std::size_t>(category_of(graph.op_work(op).op_class))] += duration;
    summary.by_device[graph.op_device(op).value()] += duration;
  }
  summary.longest_ops = result.critical_path;
  const std::size_t keep = std::min(longest_count, summary.longest_ops.size());
  std::partial_sort(summary.longest_ops.begin(), summary.longest_ops.begin() + static_cast<std::ptrdiff_t>(keep),
                    summary.longest_ops.end(), [&](OpId a, OpId b) {
                      const TimeNs da = result.duration(a);
                      const TimeNs db = result.duration(b);
                      return da != db ? da > db : a < b;
                    });
  summary.longest_ops.resize(keep);
  return summary;
}

}  // namespace weft
