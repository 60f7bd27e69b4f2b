#include "simulator/planner/iteration_bound.hpp"

#include <filesystem>
#include <numeric>
#include <set>
#include <thread>

#include <fmt/format.h>
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "simulator/planner/sweep.hpp"
#include "simulator/workload/multimodal_model.hpp"
#include "simulator/workload/stage_partition.hpp"
#include "tests/simulator/workload/training_test_support.hpp"

namespace weft {
namespace {

TrainingScenario bound_scenario(const std::string& parallel, int gpus = 2) {
  return test::scenario_from(fmt::format(R"({{"model": {}, "cluster": {{"base": "dgx-h100", "gpus": {}}},
      "parallel": {},
      "training": {{"global_batch": 4, "micro_batch": 1, "seq_len": 2048}}}})",
                                         test::kSmallLlama, gpus, parallel));
}

TimeNs sum_of(const std::vector<LayerComputeTimes>& layers, int first, int end, TimeNs LayerComputeTimes::*field) {
  TimeNs total = 0;
  for (int l = first; l < end; ++l) total += layers[static_cast<std::size_t>(l)].*field;
  return total;
}

TEST_CASE("a layer's compute is what the stage partition prices it, and one stage's bound is m times it", "[bound]") {
  const TrainingScenario plan = bound_scenario(R"({"tp": 1, "pp": 1, "dp": 1})", 1);
  IterationBound bound(plan);
  const std::vector<LayerComputeTimes>& layers = bound.layer_times(plan);
  // The Cornstarch partition's per-layer compute (forward, input and weight gradients), priced
  // by its own code.
  const std::vector<std::int64_t> partition_times = pipeline_layer_times(
      MultimodalModel(plan.model), plan.shard_context(), plan.training.sample(), ClusterCostModel(plan.cluster));
  REQUIRE(layers.size() == partition_times.size());
  for (std::size_t l = 0; l < layers.size(); ++l) {
    CHECK(layers[l].forward + layers[l].input_grad + layers[l].weight_grad == partition_times[l]);
  }
  // Full recompute runs a layer's forward again, not the embedding or the head anchored to it.
  CHECK(layers[3].full_recompute == layers[3].forward);
  CHECK(layers.front().full_recompute < layers.front().forward);
  CHECK(layers.back().full_recompute < layers.back().forward);
  CHECK(layers[3].full_recompute == layers.front().full_recompute);
  // One stage, 4 microbatches, nothing recomputed: the stage computes every layer 4 times.
  const TimeNs per_microbatch = std::accumulate(partition_times.begin(), partition_times.end(), TimeNs{0});
  CHECK(bound(plan) == 4 * per_microbatch);
}

TEST_CASE("full recompute of some layers adds only their forward again to the bound", "[bound][recompute]") {
  const TrainingScenario none = bound_scenario(R"({"tp": 1, "pp": 1, "dp": 1})", 1);
  const TrainingScenario first =
      bound_scenario(R"({"tp": 1, "pp": 1, "dp": 1, "recompute": "full", "recompute_layers": {"first": 3}})", 1);
  IterationBound bound(none);
  const std::vector<LayerComputeTimes>& layers = bound.layer_times(none);
  // One stage, 4 microbatches: every layer's compute, and layers 0-2's forward again, 4 times.
  const TimeNs recomputed = sum_of(layers, 0, 3, &LayerComputeTimes::full_recompute);
  CHECK(recomputed > 0);
  CHECK(*bound(first) == *bound(none) + 4 * recomputed);
  const auto simulated = test::run_training(first);
  CHECK(static_cast<double>(*bound(first)) / kNsPerSecond <= simulated.report.iteration_time_s);
}

// The forward and backward ops of a one-stage plan's microbatches on its compute stream, counted in
// the graph the simulation runs (every op but the optimizer step's, and only those that take time).
std::int64_t compute_stream_pass_ops(const TrainingScenario& plan) {
  const TrainingWorkload workload =
      build_training_workload(plan, {.unfold = true, .name_ops = false, .composites = false});
  const Graph& graph = workload.graph;
  std::int64_t ops = 0;
  for (std::size_t i = 0; i < graph.op_count(); ++i) {
    const OpRecord& op = graph.op(OpId::at(i));
    const OpWork& work = graph.work(op.work);
    if (!graph.stream(op.stream).host_issued || work.op_class == OpClass::optimizer) continue;
    if (workload.cost_model->duration(work, graph.spec(graph.device(graph.op_device(OpId::at(i))).spec)) > 0) ++ops;
  }
  return ops;
}

TEST_CASE("each op the bound counts holds the compute stream for its kernel gap, but the last", "[bound]") {
  // A cluster whose roofline leaves 3 us between two kernels queued back to back.
  const std::string text = fmt::format(R"({{"model": {}, "parallel": {{"tp": 1, "pp": 1, "dp": 1}},
      "cluster": {{"base": "dgx-h100", "gpus": 1, "cost": {{"kernel_gap_ns": 3000}}}},
      "training": {{"global_batch": 4, "micro_batch": 1, "seq_len": 2048}}}})",
                                       test::kSmallLlama);
  TrainingScenario plan = test::scenario_from(text);
  plan.options.host_issue = false;
  TrainingScenario without_gap = plan;
  without_gap.options.kernel_gap = false;
  const std::int64_t ops = compute_stream_pass_ops(plan);
  CHECK(ops > 4 * 8 * 3);  // 4 microbatches of 8 layers, several ops a layer each way
  IterationBound bound(plan);
  IterationBound bound_without_gap(without_gap);
  // One stage: its ops one after the other, with a gap between each two.
  CHECK(*bound(plan) - *bound_without_gap(without_gap) == (ops - 1) * 3000);
  // And the simulation, which also runs the optimizer step there, takes at least as long.
  CHECK(static_cast<double>(*bound(plan)) / kNsPerSecond <= test::run_training(plan).report.iteration_time_s);
}

TEST_CASE("two stages add the first microbatch's forward before and the last gradient's way back", "[bound]") {
  const TrainingScenario plan =
      bound_scenario(R"({"tp": 1, "pp": 2, "dp": 1, "schedule": "1f1b", "recompute": "full"})");
  IterationBound bound(plan);
  const std::vector<LayerComputeTimes>& layers = bound.layer_times(plan);
  using L = LayerComputeTimes;
  const auto total = [&](int first, int end) {
    return sum_of(layers, first, end, &L::forward) + sum_of(layers, first, end, &L::input_grad) +
           sum_of(layers, first, end, &L::weight_grad) + sum_of(layers, first, end, &L::full_recompute);
  };
  // Stage 0 holds layers 0-3 (with the embedding), stage 1 layers 4-7 (with the head and loss).
  const TimeNs stage0 = 4 * total(0, 4);
  const TimeNs head = sum_of(layers, 0, 4, &L::forward);
  // Stage 1's last gradient crosses stage 0's input-gradient ops and the recomputation of its
  // layers but the last (recomputed in a pass of its own), after what may follow stage 1's last
  // input-gradient op: the weight gradients of its first layer.
  const TimeNs drain = sum_of(layers, 0, 4, &L::input_grad) + sum_of(layers, 0, 3, &L::full_recompute);
  const TimeNs stage1_busy = head + 4 * total(4, 8);
  const TimeNs stage1_drained = stage1_busy - layers[4].weight_grad + drain;
  const TimeNs expected = std::max(stage0, std::max(stage1_busy, stage1_drained));
  CHECK(stage1_drained > stage1_busy);  // the drain counts here
  CHECK(bound(plan) == expected);

  // Zero-bubble H1 may run weight gradients after the last input gradient: the drain then follows
  // every other op of the stage.
  TrainingScenario zero_bubble = plan;
  zero_bubble.parallel.schedule = PipelineSchedule::zb_h1;
  const TimeNs without_weights = head + 4 * (total(4, 8) - sum_of(layers, 4, 8, &L::weight_grad)) + drain;
  CHECK(bound(zero_bubble) == std::max({stage0, stage1_busy, without_weights}));
}

TEST_CASE("the bound covers models of one module with uniform batches only", "[bound]") {
  TrainingScenario plan = bound_scenario(R"({"tp": 1, "pp": 1, "dp": 1})", 1);
  IterationBound bound(plan);
  CHECK(bound(plan).has_value());
  plan.data = DataSpec{};
  CHECK_FALSE(bound(plan).has_value());
  // A virtual stage without layers holds the head apart from the last layer.
  TrainingScenario empty_stage = bound_scenario(R"({"tp": 1, "pp": 2, "dp": 1})");
  empty_stage.parallel.stage_layers = {8, 0};
  CHECK_FALSE(bound(empty_stage).has_value());
}

TEST_CASE("forward TP collectives count where every stage's TP group is placed alike", "[bound]") {
  // Without sequence parallelism nothing overlaps them: they run on the compute stream.
  const TrainingScenario aligned = bound_scenario(R"({"tp": 2, "pp": 1, "dp": 1})");
  IterationBound bound(aligned);
  const LayerComputeTimes with_collectives = bound.layer_times(aligned)[3];
  // With 3 GPUs a node, TP groups of 2 straddle nodes on some stages: not counted.
  TrainingScenario straddling = aligned;
  straddling.cluster.gpus_per_node = 3;
  const LayerComputeTimes without = bound.layer_times(straddling)[3];
  CHECK(with_collectives.forward > without.forward);
  CHECK(with_collectives.full_recompute - without.full_recompute == with_collectives.forward - without.forward);
  CHECK(with_collectives.input_grad == without.input_grad);
}

TEST_CASE("no plan is simulated faster than its bound, under every bundled stack and ZeRO stage",
          "[bound][exhaustive]") {
  for (const char* stack :
       {"megatron-core", "megatron-lm-2021", "megatron-deepspeed", "pytorch-eager", "llm-foundry"}) {
    const TrainingScenario base = test::sweep_scenario_from(fmt::format(
        R"({{"model": {}, "cluster": {{"base": "dgx-h100", "gpus": 16}}, "stack": "{}",
            "training": {{"global_batch": 16, "seq_len": 4096}}}})",
        test::kSmallLlama, stack));
    SweepGrid grid = default_grid(base, 16);
    // Selective recompute where it is per-op checkpointing (under Megatron's stacks it is "none"
    // here: fused attention).
    const std::string recompute = std::string(stack) == "pytorch-eager" ? "none,full,full/every2,selective"
                                                                        : "none,full,full/first1,full/uniform2";
    apply_grid_spec(grid, "tp=1,4 pp=1,2 cp=1,2 vpp=1,2 mb=1,2 zero=0,1,2,3 dp_shard=all,2 recompute=" + recompute);
    SweepOptions options;
    options.threads = 2;
    const SweepResult sweep = run_sweep(base, grid, 16, options);
    CHECK(sweep.simulated > 50);
    for (const PlanOutcome& plan : sweep.plans) {
      if (!plan.simulated()) continue;
      INFO(stack << ": " << plan.label);
      CHECK(static_cast<double>(*plan.iteration_bound) / kNsPerSecond <= plan.report->iteration_time_s);
    }
  }
}

// Every plan that every bundled experiment's default grid simulates takes at least its bound: the
// sweep's pruning never drops a plan of the top k. Models of several modules are checked on three
// grids of 16 GPUs (2,500 – 3,200 plans each): a chain of trained modules (VLM-S), frozen encoder
// and language model (VLM-S frozen) and two frozen encoders side by side (VALM-S); the others'
// grids take a minute or more each, and tests of small models cover every schedule and recompute
// policy (multimodal_sweep_test.cpp). Experiments that differ only in their parallel section sweep
// the same grid, once. Minutes on 2 cores: its own ctest (planner.bound_grids).
TEST_CASE("no plan of a bundled experiment's grid is simulated faster than its bound", "[.][bound_grids]") {
  int grids = 0;
  int multimodal_grids = 0;
  std::set<std::string> swept;
  for (const auto& entry : std::filesystem::directory_iterator(WEFT_SOURCE_DIR "/scenarios/experiments")) {
    const JsonDocument document = JsonDocument::parse_file(entry.path().string());
    TrainingScenario base;
    try {
      base = load_sweep_scenario(document.root());
    } catch (const InputError&) {
      continue;  // a graph scenario
    }
    // Per-sample data has no bound (such sweeps are not pruned).
    if (base.data) continue;
    const std::string name = entry.path().stem().string();
    const bool checked_multimodal =
        name == "vlm-s-16xh800" || name == "vlm-s-frozen-16xh800" || name == "valm-s-16xh800";
    if (base.model.multimodal() && !checked_multimodal) continue;
    nlohmann::json inputs = document.root().json();
    inputs.erase("parallel");
    inputs.erase("description");
    if (!swept.insert(inputs.dump()).second) continue;
    multimodal_grids += base.model.multimodal() ? 1 : 0;
    // Clusters of mixed GPU types have no bound: their sweeps are not pruned (docs/sweep.md).
    if (!base.cluster.node_groups.empty()) continue;
    // Stragglers only slow a plan down, and its bound is the healthy cluster's: the grid of the
    // same experiment without them checks a tighter case (tests/simulator/workload/
    // straggler_placement_test.cpp checks what they slow).
    if (base.cluster.stragglers) continue;
    SweepOptions options;
    options.threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    const SweepResult sweep = run_sweep(base, default_grid(base, base.cluster.gpus), base.cluster.gpus, options);
    std::int64_t checked = 0;
    for (const PlanOutcome& plan : sweep.plans) {
      if (!plan.simulated()) continue;
      INFO(entry.path().filename().string() << ": " << plan.label);
      REQUIRE(plan.iteration_bound.has_value());
      CHECK(static_cast<double>(*plan.iteration_bound) / kNsPerSecond <= plan.report->iteration_time_s);
      ++checked;
    }
    CHECK(checked == sweep.simulated);
    CHECK(checked > 0);
    ++grids;
  }
  // The CPU GPT grid, GPT-3 1.3B and 175B, Llama 3 70B (three) and 405B, the 30-GPU grids of the
  // Oobleck and Bamboo experiments, ...
  CHECK(grids >= 20);
  CHECK(multimodal_grids == 3);
}

}  // namespace
}  // namespace weft
