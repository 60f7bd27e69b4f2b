// Checkpoint-restore against full re-simulation on a schedule-search-like workload
// (docs/PERFORMANCE.md): one pipeline (Llama 3 8B, PP8, 64 microbatches) re-simulated in seeded
// random orders of each stage's passes that its dependencies allow. Each order is resumed from
// the checkpoint (the graph rebuilt in the new order, passes stamped from kept schedules) and
// simulated fully (the same rebuilt graph, every op); generating the orders is not timed. The
// argument is the number of orders. Full run:
//   build/tests/weft_bench_checkpoint --benchmark_filter=/1000
#include <algorithm>
#include <chrono>
#include <memory>
#include <random>

#include <benchmark/benchmark.h>

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

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// The orders go in blocks of kBlock, each block resumed and then simulated fully: a block runs
// warm, as a search's resumes follow each other, and a machine whose speed drifts slows both ways
// alike. The counters hold each way's total and their ratio.
constexpr std::int64_t kBlock = 50;

void BM_ResumeAgainstFull(benchmark::State& state) {
  const Pipeline& p = pipeline();
  SimulationOptions full;
  full.reuse = false;
  double resume_s = 0.0;
  double full_s = 0.0;
  for (auto _ : state) {
    for (std::int64_t first = 0; first < state.range(0); first += kBlock) {
      std::vector<StreamOrder> orders;
      for (std::int64_t seed = first; seed < std::min(first + kBlock, state.range(0)); ++seed) {
        orders.push_back(random_order(p.checkpoint->graph(), seed));
      }
      std::vector<TimeNs> resumed;
      auto start = std::chrono::steady_clock::now();
      for (const StreamOrder& order : orders) resumed.push_back(p.checkpoint->resume(order).result.makespan);
      resume_s += seconds_since(start);
      std::vector<TimeNs> expected;
      start = std::chrono::steady_clock::now();
      for (const StreamOrder& order : orders) {
        const ReissuedGraph reissued = reissue(p.checkpoint->graph(), order);
        expected.push_back(simulate(reissued.graph, *p.workload.cost_model, full).makespan);
      }
      full_s += seconds_since(start);
      if (resumed != expected) state.SkipWithError("resumed and full makespans differ");
    }
  }
  const ScheduleCacheStats stats = p.checkpoint->stats();
  state.counters["orders"] = static_cast<double>(state.range(0));
  state.counters["ops"] = static_cast<double>(p.checkpoint->graph().op_count());
  state.counters["resume_s"] = resume_s;
  state.counters["full_s"] = full_s;
  state.counters["speedup"] = full_s / resume_s;
  state.counters["hits"] = static_cast<double>(stats.hits);
  state.counters["misses"] = static_cast<double>(stats.misses);
}
BENCHMARK(BM_ResumeAgainstFull)->Arg(10)->Arg(1000)->Iterations(1)->Unit(benchmark::kSecond);

}  // namespace
}  // namespace weft::bench
