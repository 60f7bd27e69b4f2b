// Engine throughput on a synthetic layered DAG (docs/PERFORMANCE.md). The full-size run:
//   build/tests/weft_bench_engine --benchmark_filter='BM_Simulate/10000000'
// Each iteration simulates the same graph from scratch: costing, readiness, memory, critical path.
#include <sys/resource.h>

#include <map>
#include <memory>

#include <benchmark/benchmark.h>

#include "simulator/engine/engine.hpp"
#include "tests/bench/layered_graph.hpp"

namespace weft::bench {
namespace {

constexpr int kWidth = 64;

double peak_rss_mib() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_maxrss) / 1024.0;  // ru_maxrss is in KiB on Linux
}

const Graph& cached_graph(std::int64_t op_count) {
  static std::map<std::int64_t, std::unique_ptr<Graph>> graphs;
  auto& graph = graphs[op_count];
  if (!graph) graph = std::make_unique<Graph>(make_layered_graph(op_count, kWidth));
  return *graph;
}

void BM_Simulate(benchmark::State& state) {
  const Graph& graph = cached_graph(state.range(0));
  const RooflineCostModel cost_model;
  for (auto _ : state) {
    SimulationResult result = simulate(graph, cost_model);
    benchmark::DoNotOptimize(result.makespan);
  }
  state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(graph.op_count()));
  state.counters["graph_MiB"] = static_cast<double>(graph.memory_bytes()) / (1 << 20);
  state.counters["peak_rss_MiB"] = peak_rss_mib();
}
BENCHMARK(BM_Simulate)->Arg(100'000)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Simulate)->Arg(10'000'000)->MinTime(2.0)->Unit(benchmark::kMillisecond);

void BM_BuildGraph(benchmark::State& state) {
  for (auto _ : state) {
    Graph graph = make_layered_graph(state.range(0), kWidth);
    benchmark::DoNotOptimize(graph.op_count());
  }
  state.SetItemsProcessed(state.iterations() * state.range(0));
}
BENCHMARK(BM_BuildGraph)->Arg(100'000)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace weft::bench
