#include "simulator/engine/fold_flat_result.hpp"

#include <limits>

#include "simulator/engine/critical_path.hpp"
#include "simulator/graph/subgraph.hpp"

namespace weft {
namespace {

struct FoldedComposite {
  std::shared_ptr<const TemplateSchedule> schedule;
  TimeNs start = 0;  // absolute
  OpId first_op;     // the flat op that starts first
};

FoldedComposite fold_expansion(const FlatGraph& flat, const SimulationResult& result, std::uint32_t index) {
  const FlatGraph::Expansion& expansion = flat.expansions[index];
  const std::size_t op_count = expansion.flat_op.size();
  auto schedule = std::make_shared<TemplateSchedule>();
  schedule->op_start.resize(op_count);
  schedule->op_end.resize(op_count);
  schedule->nested.assign(op_count, nullptr);
  FoldedComposite folded{nullptr, std::numeric_limits<TimeNs>::max(), OpId::none()};
  for (std::size_t i = 0; i < op_count; ++i) {
    TimeNs start = 0;
    OpId first = expansion.flat_op[i];
    if (expansion.child[i] == FlatGraph::kNoChild) {
      start = result.start(first);
      schedule->op_end[i] = result.end(first);
    } else {
      FoldedComposite child = fold_expansion(flat, result, expansion.child[i]);
      start = child.start;
      first = child.first_op;
      schedule->op_end[i] = child.start + child.schedule->span;
      schedule->nested[i] = std::move(child.schedule);
    }
    schedule->op_start[i] = start;
    if (start < folded.start) {
      folded.start = start;
      folded.first_op = first;
    }
  }
  // Relative to the first start, which is then the origin.
  for (std::size_t i = 0; i < op_count; ++i) {
    schedule->op_start[i] -= folded.start;
    schedule->op_end[i] -= folded.start;
  }
  derive_boundary_times(*expansion.subgraph, *schedule);
  folded.schedule = std::move(schedule);
  return folded;
}

}  // namespace

SimulationResult fold_flat_result(const Graph& graph, const FlatGraph& flat, SimulationResult flat_result) {
  SimulationResult result;
  result.makespan = flat_result.makespan;
  result.devices = std::move(flat_result.devices);
  result.op_start.resize(graph.op_count());
  result.op_end.resize(graph.op_count());
  result.op_binding.assign(graph.op_count(), OpId::none());
  result.composite_schedules.resize(graph.composite_count());
  auto original_binding = [&](OpId flat_op, OpId self) {
    const OpId binding = flat_result.op_binding[flat_op.value()];
    if (!binding.valid()) return OpId::none();
    const OpId original = flat.original_op[binding.value()];
    return original == self ? OpId::none() : original;
  };
  for (std::size_t i = 0; i < graph.op_count(); ++i) {
    const OpId op(static_cast<OpId::value_type>(i));
    if (const CompositeId composite = graph.op_composite(op); composite.valid()) {
      FoldedComposite folded = fold_expansion(flat, flat_result, flat.expansion_of[composite.value()]);
      result.op_start[i] = folded.start;
      result.op_end[i] = folded.start + folded.schedule->span;
      result.op_binding[i] = original_binding(folded.first_op, op);
      result.composite_schedules[composite.value()] = std::move(folded.schedule);
    } else {
      const OpId flat_op = flat.flat_op[i];
      result.op_start[i] = flat_result.start(flat_op);
      result.op_end[i] = flat_result.end(flat_op);
      result.op_binding[i] = original_binding(flat_op, op);
    }
  }
  result.critical_path = find_critical_path(result);
  return result;
}

}  // namespace weft
