#include "kernels/bench/scenario_cases.hpp"

#include <algorithm>
#include <optional>
#include <set>
#include <tuple>

#include "kernels/kernel_op.hpp"

namespace weft {
namespace {

bool wants(const SuiteOptions& suite, BenchPart part) {
  return std::find(suite.parts.begin(), suite.parts.end(), part) != suite.parts.end();
}

bool is_collective(OpClass op) {
  return op == OpClass::allreduce || op == OpClass::allgather || op == OpClass::reducescatter ||
         op == OpClass::alltoall || op == OpClass::broadcast;
}

// Whether the bench can place a group of `size` ranks, `per_node` on each of its nodes, on the
// job (CommunicationBench::group: the first size / per_node nodes, per_node ranks on each).
bool placeable(const SuiteOptions& suite, int size, int per_node) {
  const int node_size = suite.ranks_per_node > 0 ? suite.ranks_per_node : suite.ranks;
  return size <= suite.ranks && per_node <= node_size && size % per_node == 0 &&
         size / per_node <= suite.ranks / node_size;
}

// The case that times `work`, if its part is asked for; `unplaced` gets communicator placements
// the job cannot form.
std::optional<BenchCase> case_for(const OpWork& work, const ClusterCostModel& cost, const SuiteOptions& suite,
                                  std::vector<std::pair<int, int>>& unplaced) {
  const OpClass op = work.op_class;
  if (op == OpClass::gemm) {
    if (!wants(suite, BenchPart::gemm)) return std::nullopt;
    const KernelOp kernel = kernel_op_for(work);
    return BenchCase{op,
                     work.dtype,
                     {kernel.gemm.m, kernel.gemm.n, kernel.gemm.k},
                     MeasurementSplit::fit,
                     kernel_of(kernel.gemm.layout),
                     false};
  }
  if (op == OpClass::attention_fwd || op == OpClass::attention_bwd) {
    if (!wants(suite, BenchPart::attention)) return std::nullopt;
    attention_shape_of(work.dims(), work.dtype);  // refuses, before any rank measures, what no kernel runs
    return BenchCase{op, work.dtype, {work.shape.begin(), work.shape.end()}};
  }
  if (work.comm_group == 0) {
    if (!wants(suite, BenchPart::memory) || !is_memory_bound_class(op)) return std::nullopt;
    const KernelOp kernel = kernel_op_for(work);
    if (kernel.kind != KernelKind::memory_bound) return std::nullopt;
    return BenchCase{OpClass::elementwise, work.dtype, {kernel.memory.inputs, kernel.memory.outputs}};
  }
  const bool send = op == OpClass::send;
  if (!(send ? wants(suite, BenchPart::p2p) : is_collective(op) && wants(suite, BenchPart::collectives))) {
    return std::nullopt;
  }
  const CommGroup& group = cost.group(work.comm_group);
  if (group.size < 2) return std::nullopt;
  if (!placeable(suite, group.size, group.ranks_per_node)) {
    const std::pair placement{group.size, group.ranks_per_node};
    if (std::find(unplaced.begin(), unplaced.end(), placement) == unplaced.end()) unplaced.push_back(placement);
    return std::nullopt;
  }
  // Every rank's share a whole number of bf16 elements, as in the suite.
  const std::int64_t unit = send ? 2 : 2 * std::int64_t{group.size};
  const std::int64_t bytes = std::max(unit, work.network_bytes / unit * unit);
  return BenchCase{op, Dtype::bf16, {bytes, group.size, group.ranks_per_node}};
}

}  // namespace

ScenarioCases scenario_bench_cases(const Graph& graph, const ClusterCostModel& cost, const SuiteOptions& suite) {
  // The first op of each work, for the label.
  std::vector<OpId> first_op(graph.work_count(), OpId::none());
  for (std::size_t i = 0; i < graph.op_count(); ++i) {
    const OpId op(static_cast<OpId::value_type>(i));
    OpId& first = first_op[graph.op_work_id(op).value()];
    if (!first.valid()) first = op;
  }
  ScenarioCases result;
  std::set<std::tuple<OpClass, Dtype, Kernel, std::vector<std::int64_t>>> seen;
  for (std::size_t i = 0; i < graph.work_count(); ++i) {
    const WorkId id(static_cast<WorkId::value_type>(i));
    std::optional<BenchCase> c = case_for(graph.work(id), cost, suite, result.unplaced);
    if (!c || !seen.insert({c->op, c->dtype, c->kernel, c->shape}).second) continue;
    if (first_op[i].valid()) c->label = graph.display_name(first_op[i]);
    result.cases.push_back(std::move(*c));
  }
  return result;
}

}  // namespace weft
