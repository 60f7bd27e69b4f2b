// Checkpoint-restore against full re-simulation on a schedule-search-like workload
// (docs/PERFORMANCE.md): one pipeline (Llama 3 8B, PP8, 64 microbatches) re-simulated in random
// orders of each stage's passes that its dependencies allow. Both benchmarks take the same
// orders (seeded by iteration) and build the reordered graph; BM_Resume simulates it from the
// checkpoint's kept schedules, BM_FullSimulation simulates every op. The ratio of their times is
// the speed-up. The argument is the number of orders one iteration re-simulates. Full run:
//   build/tests/weft_bench_checkpoint --benchmark_filter=/1000
#include <memory>
#include <random>

#include <benchmark/benchmark.h>

#include "simulator/core/allocator_tuning.hpp"
#include "simulator/core/json_cursor.hpp"
#include "simulator/engine/simulation_checkpoint.hpp"
#include "simulator/workload/training_workload.hpp"
#include "tests/support/random_ranking.hpp"

namespace weft::bench {
namespace {

constexpr const char* kPipeline = R"({
  "model": "llama3-8b",
  "cluster": {"base": "dgx-h100", "gpus": 8},
  "parallel": {"tp": 1, "pp": 8, "dp": 1},
  "training": {"global_batch": 64, "micro_batch": 1, "seq_len": 8192}
})";

struct Pipeline {
  TrainingWorkload workload;
  std::unique_ptr<SimulationCheckpoint> checkpoint;
};

const Pipeline& pipeline() {
  static const Pipeline built = [] {
    const JsonDocument document = JsonDocument::parse_text(kPipeline, "pipeline.json");
    Pipeline p{build_training_workload(load_training_scenario(document.root()), {.name_ops = false}), nullptr};
    p.checkpoint = std::make_unique<SimulationCheckpoint>(p.workload.graph, *p.workload.cost_model);
    return p;
  }();
  return built;
}

StreamOrder random_order(const Graph& graph, std::int64_t seed) {
  std::mt19937_64 rng(static_cast<std::uint64_t>(seed));
  return stream_order_of(graph, test::random_ranking(graph, rng));
}

void BM_Resume(benchmark::State& state) {
  const Pipeline& p = pipeline();
  for (auto _ : state) {
    for (std::int64_t seed = 0; seed < state.range(0); ++seed) {
      state.PauseTiming();
      const StreamOrder order = random_order(p.checkpoint->graph(), seed);
      state.ResumeTiming();
      const auto resumed = p.checkpoint->resume(order);
      benchmark::DoNotOptimize(resumed.result.makespan);
    }
  }
  const ScheduleCacheStats stats = p.checkpoint->stats();
  state.counters["orders"] = static_cast<double>(state.range(0));
  state.counters["ops"] = static_cast<double>(p.checkpoint->graph().op_count());
  state.counters["hits"] = static_cast<double>(stats.hits);
  state.counters["misses"] = static_cast<double>(stats.misses);
}
BENCHMARK(BM_Resume)->Arg(10)->Arg(1000)->Iterations(1)->Unit(benchmark::kSecond);

void BM_FullSimulation(benchmark::State& state) {
  const Pipeline& p = pipeline();
  SimulationOptions full;
  full.reuse = false;
  for (auto _ : state) {
    for (std::int64_t seed = 0; seed < state.range(0); ++seed) {
      state.PauseTiming();
      const StreamOrder order = random_order(p.checkpoint->graph(), seed);
      state.ResumeTiming();
      const ReissuedGraph reissued = reissue(p.checkpoint->graph(), order);
      const SimulationResult result = simulate(reissued.graph, *p.workload.cost_model, full);
      benchmark::DoNotOptimize(result.makespan);
    }
  }
}
BENCHMARK(BM_FullSimulation)->Arg(10)->Arg(1000)->Iterations(1)->Unit(benchmark::kSecond);

}  // namespace
}  // namespace weft::bench

int main(int argc, char** argv) {
  weft::keep_freed_memory_for_reuse();  // as the weft CLI does
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
