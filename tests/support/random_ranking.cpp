#include "tests/support/random_ranking.hpp"

namespace weft::test {
namespace {

OpId representative(const Graph& graph, OpId op) {
  const CollectiveId collective = graph.op_collective(op);
  return collective.valid() ? graph.collective_members(collective).front() : op;
}

template <class Fn>
void for_each_dependent(const Graph& graph, OpId op, Fn&& fn) {
  for (OpId successor : graph.data_and_control_successors(op)) fn(successor);
  if (const CompositeId composite = graph.op_composite(op); composite.valid()) {
    for (const auto& [signal, successor] : graph.signal_successors(composite)) fn(successor);
  }
}

}  // namespace

std::vector<OpId> random_ranking(const Graph& graph, std::mt19937_64& rng) {
  const std::size_t n = graph.op_count();
  std::vector<std::uint32_t> waiting(n, 0);  // by representative
  for (std::size_t i = 0; i < n; ++i) {
    for_each_dependent(graph, OpId(static_cast<OpId::value_type>(i)),
                       [&](OpId successor) { ++waiting[representative(graph, successor).value()]; });
  }
  std::vector<OpId> ready;
  for (std::size_t i = 0; i < n; ++i) {
    const OpId op(static_cast<OpId::value_type>(i));
    if (representative(graph, op) == op && waiting[i] == 0) ready.push_back(op);
  }
  std::vector<OpId> ranking;
  ranking.reserve(n);
  auto release = [&](OpId op) {
    ranking.push_back(op);
    for_each_dependent(graph, op, [&](OpId successor) {
      const OpId node = representative(graph, successor);
      if (--waiting[node.value()] == 0) ready.push_back(node);
    });
  };
  while (!ready.empty()) {
    const std::size_t pick = std::uniform_int_distribution<std::size_t>(0, ready.size() - 1)(rng);
    const OpId node = ready[pick];
    ready[pick] = ready.back();
    ready.pop_back();
    if (const CollectiveId collective = graph.op_collective(node); collective.valid()) {
      for (OpId member : graph.collective_members(collective)) release(member);
    } else {
      release(node);
    }
  }
  return ranking;
}

std::vector<std::pair<OpId, OpId>> random_edges(const Graph& graph, const std::vector<OpId>& ranking, int count,
                                                std::mt19937_64& rng) {
  std::vector<std::pair<OpId, OpId>> edges;
  if (ranking.size() < 2) return edges;
  std::uniform_int_distribution<std::size_t> position(0, ranking.size() - 1);
  for (int k = 0; k < count; ++k) {
    std::size_t a = position(rng);
    std::size_t b = position(rng);
    if (a == b) continue;
    if (a > b) std::swap(a, b);
    const OpId before = ranking[a];
    const OpId after = ranking[b];
    if (representative(graph, before) == representative(graph, after)) continue;
    edges.emplace_back(before, after);
  }
  return edges;
}

}  // namespace weft::test
