// What one plan costs weft, phase by phase (docs/PERFORMANCE.md, "Plans per second"): reading and
// deriving a plan's scenario, deriving the plans of a sweep's grid, building a plan's workload (graph and pass
// templates), simulating it with the template cache warm (lookups and stamping only) and cold (template simulations
// too), its report, and the whole single estimate (scenario read, graph, engine, report). Plans: the folded GPT-3 175B
// on 1,024 A100s, the Llama 3 405B experiment on 16,384 H100s, and the VLM-S multimodal experiment on 16 H800s. Full
// run:
//   build/tests/weft_bench_plan
#include <filesystem>
#include <string>

#include <benchmark/benchmark.h>

#include "simulator/core/json_cursor.hpp"
#include "simulator/engine/engine.hpp"
#include "simulator/engine/schedule_cache.hpp"
#include "simulator/planner/sweep.hpp"
#include "simulator/planner/sweep_grid.hpp"
#include "simulator/workload/training_report.hpp"
#include "simulator/workload/training_workload.hpp"

namespace weft::bench {
namespace {

const char* const kScenarios[] = {"gpt3-175b-1024xa100", "llama3-405b-16384xh100", "vlm-s-16xh800"};

std::filesystem::path scenario_file(const std::string& name) {
  return std::filesystem::path(WEFT_SOURCE_DIR) / "scenarios" / "experiments" / (name + ".json");
}

TrainingScenario load(const std::string& name) {
  const JsonDocument document = JsonDocument::parse_file(scenario_file(name));
  return load_training_scenario(document.root());
}

constexpr WorkloadOptions kFolded{.unfold = false, .name_ops = false};

void label(benchmark::State& state) { state.SetLabel(kScenarios[state.range(0)]); }

// Reading a plan's scenario file and deriving it (the bundled cluster and its GPU's profile, the
// model, the stage partition).
void BM_Scenario(benchmark::State& state) {
  for (auto _ : state) benchmark::DoNotOptimize(load(kScenarios[state.range(0)]));
  label(state);
}

void BM_Graph(benchmark::State& state) {
  const TrainingScenario scenario = load(kScenarios[state.range(0)]);
  for (auto _ : state) benchmark::DoNotOptimize(build_training_workload(scenario, kFolded));
  label(state);
}

// A plan built and simulated once, its templates kept in a cache of its own.
struct SimulatedPlan {
  TrainingScenario scenario;
  TrainingWorkload workload;
  ScheduleCache cache;
  SimulationOptions options;
  SimulationResult result;

  explicit SimulatedPlan(const std::string& name)
      : scenario(load(name)), workload(build_training_workload(scenario, kFolded)) {
    options.cache = &cache;
    result = simulate(workload.graph, *workload.cost_model, options);
  }
};

void BM_EngineWarmTemplates(benchmark::State& state) {
  SimulatedPlan plan(kScenarios[state.range(0)]);
  for (auto _ : state) benchmark::DoNotOptimize(simulate(plan.workload.graph, *plan.workload.cost_model, plan.options));
  label(state);
}

void BM_EngineColdTemplates(benchmark::State& state) {
  const TrainingScenario scenario = load(kScenarios[state.range(0)]);
  const TrainingWorkload workload = build_training_workload(scenario, kFolded);
  for (auto _ : state) {
    ScheduleCache cache;
    SimulationOptions options;
    options.cache = &cache;
    benchmark::DoNotOptimize(simulate(workload.graph, *workload.cost_model, options));
  }
  label(state);
}

void BM_Report(benchmark::State& state) {
  const SimulatedPlan plan(kScenarios[state.range(0)]);
  for (auto _ : state) benchmark::DoNotOptimize(make_training_report(plan.scenario, plan.workload, plan.result));
  label(state);
}

// A single estimate as `weft simulate` makes it, with a cold template cache.
void BM_SinglePlan(benchmark::State& state) {
  const std::filesystem::path file = scenario_file(kScenarios[state.range(0)]);
  for (auto _ : state) {
    const JsonDocument document = JsonDocument::parse_file(file);
    const TrainingScenario scenario = load_training_scenario(document.root());
    const TrainingWorkload workload = build_training_workload(scenario, kFolded);
    ScheduleCache cache;
    SimulationOptions options;
    options.cache = &cache;
    benchmark::DoNotOptimize(
        make_training_report(scenario, workload, simulate(workload.graph, *workload.cost_model, options)));
  }
  label(state);
}

// Deriving every plan of the default Llama 3 405B grid, checking its rules and estimating its
// memory and graph size: what a sweep pays before simulating anything.
void BM_DeriveGrid405B(benchmark::State& state) {
  const JsonDocument document = JsonDocument::parse_file(scenario_file("llama3-405b-16384xh100"));
  const TrainingScenario base = load_sweep_scenario(document.root());
  const SweepGrid grid = default_grid(base, base.cluster.gpus);
  std::int64_t plans = 0;
  for (auto _ : state) plans += enumerate_sweep(base, grid, base.cluster.gpus).considered;
  state.counters["plans/s"] = benchmark::Counter(static_cast<double>(plans), benchmark::Counter::kIsRate);
}

BENCHMARK(BM_Scenario)->DenseRange(0, 2)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Graph)->DenseRange(0, 2)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_EngineWarmTemplates)->DenseRange(0, 2)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_EngineColdTemplates)->DenseRange(0, 2)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Report)->DenseRange(0, 2)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_SinglePlan)->DenseRange(0, 2)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_DeriveGrid405B)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace weft::bench
