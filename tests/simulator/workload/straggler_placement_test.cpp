#include "simulator/workload/straggler_placement.hpp"

#include <fmt/format.h>
#include <catch2/catch.hpp>

#include "simulator/planner/plan_enumeration.hpp"
#include "simulator/planner/sweep.hpp"
#include "simulator/workload/stage_partition.hpp"
#include "tests/simulator/workload/training_test_support.hpp"

namespace weft {
namespace {

using Catch::Matchers::Contains;
using test::kSmallLlama;
using test::run_training;
using test::scenario_from;

// A scenario of the small Llama on `gpus` H100s, 4 a node (so that DP groups cross nodes), with
// the cluster's stragglers section, under Megatron-Core without its framework time per layer (the
// host's, which takes as long beside a slow GPU as beside a healthy one).
std::string plan_text(int gpus, const std::string& parallel, const std::string& stragglers, int global_batch = 16) {
  return fmt::format(R"({{"model": {}, "cluster": {{"base": "dgx-h100", "gpus": {}, "gpus_per_node": 4,
                           "stragglers": {}}}, "parallel": {},
                         "stack": {{"base": "megatron-core", "layer_framework_us": 0}},
                         "training": {{"global_batch": {}, "seq_len": 2048}}}})",
                     kSmallLlama, gpus, stragglers, parallel, global_batch);
}

TEST_CASE("pace setter: the slowest GPU a folded rank stands for", "[stragglers]") {
  ClusterSpec cluster;
  cluster.gpus = 16;
  cluster.gpus_per_node = 4;
  auto parts = std::make_shared<Stragglers>(16, 4);
  parts->slow_gpu(5, 0.7);  // tp 1, dp 0, pp 1 of tp2 dp2 pp4 (ranks: tp + 2 (dp + 2 pp))
  parts->slow_gpu(6, 0.9);  // tp 0, dp 1, pp 1
  parts->finish();
  cluster.stragglers = parts;
  const ParallelDims dims{2, 1, 2, 4};
  CHECK(pace_setter(cluster, dims, {0, 0, 0, 1}, {}).gpu == 5);
  CHECK(pace_setter(cluster, dims, {0, 0, 0, 1}, {}).speed == 0.7);
  CHECK(pace_setter(cluster, dims, {0, 0, 1, 1}, {true, true, false}).gpu == 6);
  CHECK(pace_setter(cluster, dims, {0, 0, 1, 1}, {false, false, false}).gpu == 6);
  CHECK(pace_setter(cluster, dims, {1, 0, 1, 1}, {false, false, false}).gpu == -1);
  CHECK(pace_setter(cluster, dims, {0, 0, 0, 0}, {}).speed == 1.0);
  // Replicas 0 and 1 differ at stage 1 (0.7 and 0.9): both simulated.
  CHECK(distinct_replicas(cluster, dims) == std::vector<int>{0, 1});
  const ParallelDims four_replicas{2, 1, 4, 2};  // GPU 5: dp 2, pp 0; GPU 6: dp 3, pp 0
  CHECK(distinct_replicas(cluster, four_replicas) == std::vector<int>{0, 2, 3});
  cluster.stragglers = nullptr;
  CHECK(distinct_replicas(cluster, four_replicas) == std::vector<int>{0});
}

TEST_CASE("a GPU at half speed takes exactly twice as long", "[stragglers]") {
  // One GPU, no communication: every op is a kernel, each costed at twice its healthy time.
  const std::string plan = R"({"tp": 1, "pp": 1, "dp": 1})";
  const auto healthy = run_training(scenario_from(plan_text(1, plan, "{}", 2)));
  const auto slow = run_training(scenario_from(plan_text(1, plan, R"({"gpus": [{"gpu": 0, "speed": 0.5}]})", 2)));
  CHECK(slow.result.makespan == 2 * healthy.result.makespan);
  REQUIRE(slow.report.stragglers);
  CHECK(slow.report.stragglers->gpu == 0);
  CHECK(slow.report.stragglers->speed == 0.5);
  CHECK_FALSE(healthy.report.stragglers);
}

TEST_CASE("folded ranks at their slowest GPU's pace give the unfolded iteration", "[stragglers][folding]") {
  // Every rank simulated at its own speed is the independent computation: a TP or CP group waits
  // at each collective for its slowest member, replicas for the slowest at the gradient reduction.
  const std::string stragglers = R"({"gpus": [{"gpu": 5, "speed": 0.7}, {"gpu": 2, "speed": 0.85}],
                                     "nics": [{"node": 1, "speed": 0.5}]})";
  // With context parallelism the folded rank is an upper bound, not exact (docs/stragglers.md):
  // ring attention passes KV chunks peer to peer, and a fast member's chunk can arrive before the
  // slowest member would have sent it.
  const std::vector<std::pair<std::string, bool>> plans = {
      {R"({"tp": 2, "pp": 2, "dp": 2, "sequence_parallel": true, "zero": 1})", true},
      {R"({"tp": 2, "cp": 2, "pp": 2, "dp": 1, "sequence_parallel": true})", false},
      {R"({"tp": 2, "cp": 2, "pp": 2, "dp": 1, "cp_algorithm": "allgather"})", false},
      {R"({"tp": 1, "pp": 2, "dp": 4, "schedule": "gpipe"})", true},
      {R"({"tp": 2, "pp": 2, "dp": 2, "vpp": 2, "schedule": "interleaved"})", true},
  };
  for (const auto& [parallel, exact] : plans) {
    INFO(parallel);
    const TrainingScenario scenario = scenario_from(plan_text(8, parallel, stragglers));
    const auto folded = run_training(scenario, false);
    const auto unfolded = run_training(scenario, true);
    if (exact) {
      CHECK(folded.result.makespan == unfolded.result.makespan);
    } else {
      CHECK(folded.result.makespan >= unfolded.result.makespan);
      CHECK(static_cast<double>(folded.result.makespan) <= 1.01 * static_cast<double>(unfolded.result.makespan));
    }
    CHECK(folded.workload.ranks.size() < unfolded.workload.ranks.size());
    REQUIRE(folded.report.stragglers);
    CHECK(folded.report.stragglers->gpu == 5);
    CHECK(folded.report.stragglers->nic_node == 1);
    // Slower than the same plan on healthy parts.
    TrainingScenario healthy = scenario;
    healthy.cluster.stragglers = nullptr;
    CHECK(run_training(healthy).result.makespan < folded.result.makespan);
  }
}

TEST_CASE("a slow NVLink slows the groups inside its node, folded as unfolded", "[stragglers][folding]") {
  // Node 1 (GPUs 4-7) at half its NVLink bandwidth: its TP groups' collectives, and a pipeline's
  // transfers inside it, slow down; every rank simulated on its own is the independent computation.
  const std::string stragglers = R"({"nvlinks": [{"node": 1, "speed": 0.5}]})";
  for (const std::string parallel :
       {R"({"tp": 2, "pp": 2, "dp": 2, "sequence_parallel": true, "zero": 1})",
        R"({"tp": 1, "pp": 2, "dp": 4, "schedule": "gpipe"})", R"({"tp": 4, "pp": 1, "dp": 2})"}) {
    INFO(parallel);
    const TrainingScenario scenario = scenario_from(plan_text(8, parallel, stragglers));
    const auto folded = run_training(scenario, false);
    CHECK(folded.result.makespan == run_training(scenario, true).result.makespan);
    REQUIRE(folded.report.stragglers);
    CHECK(folded.report.stragglers->slow_nvlinks == 1);
    CHECK(folded.report.stragglers->nvlink_node == 1);
    CHECK(folded.report.stragglers->nvlink_speed == 0.5);
    TrainingScenario healthy = scenario;
    healthy.cluster.stragglers = nullptr;
    CHECK(run_training(healthy).result.makespan < folded.result.makespan);
  }
}

TEST_CASE("replicas that stragglers set apart are simulated apart", "[stragglers]") {
  // dp 4 on 4 GPUs: GPU 2 (replica 2) slow. Replicas 0, 1 and 3 run alike: two replicas simulated.
  const TrainingScenario scenario =
      scenario_from(plan_text(4, R"({"tp": 1, "pp": 1, "dp": 4})", R"({"gpus": [{"gpu": 2, "speed": 0.6}]})"));
  const auto run = run_training(scenario);
  CHECK(run.workload.per_replica);
  REQUIRE(run.workload.ranks.size() == 2);
  CHECK(run.workload.ranks[0].coordinates.dp == 0);
  CHECK(run.workload.ranks[1].coordinates.dp == 2);
  CHECK(run.workload.ranks[1].speed == 0.6);
  CHECK(run.result.makespan == run_training(scenario, true).result.makespan);
}

TEST_CASE("partition: slower stages get fewer layers", "[stragglers][partition]") {
  // Six equal layers, the second stage at half speed: 4 + 2 loads both stages 4 units.
  const std::vector<std::int64_t> equal(6, 10);
  const std::vector<double> half{1.0, 0.5};
  CHECK(partition_balanced(equal, 2, half) == std::vector<int>{4, 2});
  CHECK(partition_balanced(equal, 2) == std::vector<int>{3, 3});
  // Against every split of random cases: the heaviest load (weight over speed) is the least.
  std::uint64_t state = 12345;
  auto next = [&](int bound) {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    return static_cast<int>((state >> 33) % static_cast<std::uint64_t>(bound));
  };
  auto heaviest = [](const std::vector<std::int64_t>& w, const std::vector<int>& split, const std::vector<double>& s) {
    double worst = 0.0;
    std::size_t layer = 0;
    for (std::size_t g = 0; g < split.size(); ++g) {
      std::int64_t load = 0;
      for (int k = 0; k < split[g]; ++k) load += w[layer++];
      worst = std::max(worst, static_cast<double>(load) / s[g]);
    }
    return worst;
  };
  for (int trial = 0; trial < 40; ++trial) {
    const int layers = 3 + next(7);
    std::vector<std::int64_t> weights;
    for (int l = 0; l < layers; ++l) weights.push_back(1 + next(100));
    std::vector<double> speeds;
    for (int g = 0; g < 3; ++g) speeds.push_back(0.25 + 0.25 * next(4));
    double best = 1e300;
    for (int a = 1; a < layers - 1; ++a) {
      for (int b = 1; a + b < layers; ++b) best = std::min(best, heaviest(weights, {a, b, layers - a - b}, speeds));
    }
    const std::vector<int> split = partition_balanced(weights, 3, speeds);
    INFO("trial " << trial);
    // Within the rounding of the integer cap (one unit over the slowest speed, 0.25).
    CHECK(heaviest(weights, split, speeds) <= best * (1 + 1e-9) + 5.0);
  }
}

TEST_CASE("a time partition and the sweep give slow stages fewer layers", "[stragglers][partition]") {
  // Stage 1 of pp 2 holds GPUs 4..7 (tp 2, dp 2); GPU 6 at 60%.
  const std::string stragglers = R"({"gpus": [{"gpu": 6, "speed": 0.6}]})";
  const TrainingScenario scenario =
      scenario_from(plan_text(8, R"({"tp": 2, "pp": 2, "dp": 2, "stage_layers": "time"})", stragglers));
  const std::vector<int> layers = scenario.layers_per_virtual_stage();
  REQUIRE(layers.size() == 2);
  CHECK(layers[0] > layers[1]);
  // The sweep's plans of pp 2 balance the same way.
  TrainingScenario base = scenario;
  SweepGrid grid;
  grid.tp = {2};
  grid.pp = {2};
  grid.cp = {1};
  grid.vpp = {1};
  grid.micro_batch = {1};
  grid.recompute = {{.policy = RecomputePolicy::none, .layers = {}}};
  grid.zero = {0};
  grid.schedule = {PipelineSchedule::one_f_one_b};
  grid.sequence_parallel = {false};
  grid.partition = default_grid(base, 8).partition;  // by time, on a cluster of uneven GPUs
  const PlanEnumeration plans = enumerate_plans(base, grid, 8);
  REQUIRE(plans.plans.size() == 1);
  CHECK(plans.plans.front().scenario.layers_per_virtual_stage() == layers);
  // And the slow stage, given fewer layers, makes a faster iteration than the even split.
  TrainingScenario even = scenario;
  even.parallel.stage_layers = {4, 4};
  even.parallel.partition = ParallelPlan::Partition::given;
  CHECK(run_training(scenario).result.makespan < run_training(even).result.makespan);
}

// The small Llama on two nodes of 4 GPUs, node 1 of `gpu` (roofline rules: the tests' scenarios
// have no profile).
std::string mixed_text(const std::string& parallel, const std::string& gpu = "a100-sxm-80gb",
                       const std::string& model = kSmallLlama, const std::string& stack = "megatron-core") {
  return fmt::format(R"({{"model": {}, "stack": "{}", "cluster": {{"base": "dgx-h100", "gpus": 8, "gpus_per_node": 4,
                           "node_groups": [{{"first_node": 1, "nodes": 1, "gpu": "{}", "calibration": "none"}}]}},
                         "parallel": {}, "training": {{"global_batch": 16, "seq_len": 2048}}}})",
                     model, stack, gpu, parallel);
}

const std::vector<std::string> kMixedPlans = {R"({"tp": 2, "pp": 2, "dp": 2, "sequence_parallel": true, "zero": 1})",
                                              R"({"tp": 1, "pp": 1, "dp": 8})", R"({"tp": 4, "pp": 1, "dp": 2})"};

TEST_CASE("the sweep prices each shard context's layers once, and splits every plan as alone", "[stragglers][mixed]") {
  // Stragglers and a node of A100s: every plan of a grid with several shard contexts (TP, SP,
  // micro-batch) and several plans each (PP, VPP, schedule, recompute), split from the layer
  // times the sweep priced once per context and GPU type, against each plan split on its own.
  const std::string stragglers = R"({"gpus": [{"gpu": 6, "speed": 0.6}]})";
  for (const std::string& text :
       {mixed_text(R"({"tp": 1, "pp": 1, "dp": 8})"), plan_text(8, R"({"tp": 1, "pp": 1, "dp": 8})", stragglers)}) {
    const TrainingScenario base = scenario_from(text);
    SweepGrid grid = default_grid(base, 8);
    apply_grid_spec(grid, "tp=1,2 pp=2,4 vpp=1,2 mb=1,2 recompute=none,full zero=0");
    const PlanEnumeration plans = enumerate_plans(base, grid, 8);
    std::int64_t split = 0;
    for (const PlanCandidate& plan : plans.plans) {
      if (!plan.valid() || plan.scenario.parallel.partition != ParallelPlan::Partition::time) continue;
      TrainingScenario alone = plan.scenario;
      alone.parallel.stage_layers.clear();
      derive_stage_layers(alone);
      INFO(plan_label(plan.scenario));
      CHECK(alone.parallel.stage_layers == plan.scenario.parallel.stage_layers);
      ++split;
    }
    CHECK(split >= 16);
  }
}

TEST_CASE("mixed GPU types: folded runs each stage and replica on its own type", "[stragglers][mixed]") {
  // Stages (pp 2) or replicas (dp 8; tp 4 x dp 2) on different types: each simulated rank runs on
  // its GPUs' type, against every rank simulated on its own. A stack with one attention kernel for
  // both architectures: unfolded, the replicas of a stage share one stage's kernels.
  for (const std::string& parallel : kMixedPlans) {
    INFO(parallel);
    const TrainingScenario scenario =
        scenario_from(mixed_text(parallel, "a100-sxm-80gb", kSmallLlama, "megatron-lm-2021"));
    const auto folded = run_training(scenario, false);
    const auto unfolded = run_training(scenario, true);
    CHECK(folded.result.makespan == unfolded.result.makespan);
    CHECK(folded.workload.ranks.size() < unfolded.workload.ranks.size());
  }
}

TEST_CASE("mixed GPU types: between the cluster on either type alone", "[stragglers][mixed]") {
  // Each type with its own architecture's kernels (cuDNN attention on H100, FlashAttention-2 on
  // A100): slower than on H100s alone, no slower than on A100s alone.
  for (const std::string& parallel : kMixedPlans) {
    INFO(parallel);
    const TrainingScenario scenario = scenario_from(mixed_text(parallel));
    const TimeNs mixed = run_training(scenario).result.makespan;
    TrainingScenario h100 = scenario;
    h100.cluster.node_groups.clear();
    const TrainingScenario a100 = scenario_from(fmt::format(
        R"({{"model": {}, "cluster": {{"base": "dgx-h100", "gpus": 8, "gpus_per_node": 4, "gpu": "a100-sxm-80gb"}},
             "parallel": {}, "training": {{"global_batch": 16, "seq_len": 2048}}}})",
        kSmallLlama, parallel));
    CHECK(run_training(h100).result.makespan < mixed);
    CHECK(mixed <= run_training(a100).result.makespan);
  }
  // Unfolded, a stage whose replicas would need different kernels is refused.
  CHECK_THROWS_WITH(run_training(scenario_from(mixed_text(R"({"tp": 1, "pp": 1, "dp": 8})")), true),
                    Contains("--unfold") && Contains("different kernels"));
}

TEST_CASE("mixed GPU types: a stage's memory is its GPU's, its peak the mean", "[stragglers][mixed]") {
  const TrainingScenario scenario = scenario_from(mixed_text(R"({"tp": 4, "pp": 2, "dp": 1})", "a100-sxm-40gb"));
  const auto run = run_training(scenario);
  REQUIRE(run.report.stages.size() == 2);
  CHECK(run.report.stages[0].memory_capacity == scenario.cluster.gpu.memory_capacity);
  CHECK(run.report.stages[1].memory_capacity == scenario.cluster.node_groups[0].gpu.memory_capacity);
  const double mean =
      (scenario.cluster.gpu.peak(Dtype::bf16) + scenario.cluster.node_groups[0].gpu.peak(Dtype::bf16)) / 2;
  CHECK(run.report.peak_tflops * 1e12 == Approx(mean));
}

TEST_CASE("mixed GPU types: a time partition gives the slower type fewer layers", "[stragglers][mixed]") {
  const TrainingScenario scenario = scenario_from(mixed_text(R"({"tp": 4, "pp": 2, "dp": 1, "stage_layers": "time"})"));
  const std::vector<int> layers = scenario.layers_per_virtual_stage();
  REQUIRE(layers.size() == 2);
  CHECK(layers[0] > layers[1]);
  TrainingScenario even = scenario;
  even.parallel.stage_layers = {4, 4};
  even.parallel.partition = ParallelPlan::Partition::given;
  CHECK(run_training(scenario).result.makespan < run_training(even).result.makespan);
}

TEST_CASE("mixed GPU types: a TP group across types is refused when folded", "[stragglers][mixed][errors]") {
  // tp 8 over nodes of 4: every TP group spans an H100 node and an A100 node. Unfolded, with one
  // attention kernel for both architectures, each rank runs on its own type.
  const std::string gpt = R"({"base": "gpt3-1.3b", "layers": 4})";
  const TrainingScenario scenario =
      scenario_from(mixed_text(R"({"tp": 8, "pp": 1, "dp": 1})", "a100-sxm-80gb", gpt, "megatron-lm-2021"));
  CHECK_THROWS_WITH(run_training(scenario, false), Contains("node_groups") && Contains("--unfold"));
  CHECK_NOTHROW(run_training(scenario, true));
}

}  // namespace
}  // namespace weft
