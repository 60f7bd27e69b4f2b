// What a study of runs over days costs weft (docs/PERFORMANCE.md, "Runs over days"): Llama 3 405B
// on 16,384 H100s under Llama 3's Table 5 failures, 30 days, checkpoint-restart every 4.2 minutes,
// 100 seeds (its iteration simulated once, outside the timing); and Oobleck's planning of GPT-3
// 6.7B on 30 single-GPU nodes (every template simulated, the best instantiation of each node count
// from 30 down to 15). Full run:
//   build/tests/weft_bench_resilience
#include <filesystem>
#include <string>

#include <benchmark/benchmark.h>

#include "simulator/core/json_cursor.hpp"
#include "simulator/engine/engine.hpp"
#include "simulator/resilience/goodput_study.hpp"
#include "simulator/resilience/oobleck_planner.hpp"
#include "simulator/resilience/run_setup.hpp"
#include "simulator/workload/training_report.hpp"
#include "simulator/workload/training_workload.hpp"

namespace weft::bench {
namespace {

constexpr int kSeeds = 100;

std::filesystem::path source_file(const std::string& path) { return std::filesystem::path(WEFT_SOURCE_DIR) / path; }

TrainingScenario load_scenario(const std::string& name) {
  const JsonDocument document = JsonDocument::parse_file(source_file("scenarios/experiments/" + name + ".json"));
  return load_training_scenario(document.root());
}

void BM_GoodputStudy(benchmark::State& state) {
  const TrainingScenario scenario = load_scenario("llama3-405b-16384xh100");
  const TrainingWorkload workload = build_training_workload(scenario);
  const SimulationResult result = simulate(workload.graph, *workload.cost_model, SimulationOptions{});
  const TrainingReport report = make_training_report(scenario, workload, result);
  const JsonDocument document = JsonDocument::parse_file(source_file("scenarios/resilience/llama3-405b-table5.json"));
  ResilienceSpec spec =
      load_resilience_spec(document.root(), scenario.cluster.gpus_per_node, checkpoint_bytes(scenario, report));
  spec.recovery.checkpoint.interval_s = 4.2 * 60.0;
  const RunSetup setup = make_run_setup(scenario, report, spec, 240);
  for (auto _ : state) benchmark::DoNotOptimize(simulate_runs(setup, 1, kSeeds));
  state.SetLabel("30 days, 100 seeds");
}
BENCHMARK(BM_GoodputStudy)->Unit(benchmark::kMillisecond);

void BM_OobleckPlanning(benchmark::State& state) {
  const TrainingScenario scenario = load_scenario("gpt3-6.7b-30xa40-oobleck");
  for (auto _ : state) {
    OobleckPlanner planner(scenario, 30, 1);
    for (int nodes = 30; nodes >= 15; --nodes) benchmark::DoNotOptimize(planner.best(nodes));
  }
  state.SetLabel("GPT-3 6.7B, 30 nodes, f = 1");
}
BENCHMARK(BM_OobleckPlanning)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace weft::bench
