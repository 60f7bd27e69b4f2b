#include "simulator/planner/sweep.hpp"

#include <fmt/format.h>
#include <catch2/catch.hpp>

#include "simulator/planner/memory_estimate.hpp"
#include "simulator/planner/plan_enumeration.hpp"
#include "tests/simulator/workload/training_test_support.hpp"
#include "tests/support/cli_expectations.hpp"

namespace weft {
namespace {

using Catch::Matchers::Contains;
using Catch::Matchers::Equals;

TrainingScenario small_base(int gpus = 8) {
  const JsonDocument document = JsonDocument::parse_text(fmt::format(R"({{
      "model": {{"name": "small", "layers": 4, "hidden": 1024, "ffn_hidden": 4096, "heads": 8, "vocab": 1000}},
      "cluster": {{"base": "dgx-h100", "gpus": {}}},
      "training": {{"global_batch": 8, "seq_len": 1024}}}})",
                                                                     gpus),
                                                         "test");
  return load_sweep_scenario(document.root());
}

TEST_CASE("enumeration counts plans and invalid reasons as computed by hand", "[sweep]") {
  SweepGrid grid;
  apply_grid_spec(grid, "tp=1,2 pp=1,2,4 cp=1 vpp=1,2 mb=1,2 recompute=none zero=0 schedule=1f1b,interleaved sp=1");
  const PlanEnumeration plans = enumerate_plans(small_base(), grid, 8);
  // 2 TP x 3 PP x (1F1B with vpp 1, interleaved with vpp 2) x 2 micro-batch sizes = 24 plans.
  CHECK(plans.plans.size() == 24);
  // Interleaved PP4 x VPP2 = 8 chunks for 4 layers (4 plans); interleaved PP1 (3 plans; the 4th
  // already fails the batch rule); TP1 PP1 DP8 with micro-batch 2 needs 16 samples (2 plans);
  // interleaved TP1 PP2 DP4 micro-batch 2 has 1 microbatch for 2 stages (1 plan).
  CHECK(plans.invalid_by_reason.at("more pipeline chunks than layers") == 4);
  CHECK(plans.invalid_by_reason.at("interleaved needs pp >= 2") == 3);
  CHECK(plans.invalid_by_reason.at("global batch not divisible by dp x micro batch") == 2);
  CHECK(plans.invalid_by_reason.at("interleaved needs microbatches divisible by pp") == 1);
  CHECK(plans.invalid == 10);
  CHECK(plans.valid == 14);
}

TEST_CASE("grid specs narrow axes and bad ones are explained", "[sweep][errors]") {
  SweepGrid grid = default_grid(small_base(), 8);
  CHECK(grid.tp == std::vector<int>{1, 2, 4, 8});
  CHECK(grid.pp == std::vector<int>{1, 2, 4});  // up to 4 layers, dividing 8 GPUs
  apply_grid_spec(grid, "tp=2..4 pp=1 mb=1,2 schedule=gpipe recompute=full,none,full/first3,full/every2,full zero=1");
  CHECK(grid.tp == std::vector<int>{2, 3, 4});
  CHECK(grid.micro_batch == std::vector<std::int64_t>{1, 2});
  CHECK(grid.schedule == std::vector<PipelineSchedule>{PipelineSchedule::gpipe});
  using Method = LayerRecompute::Method;
  CHECK(grid.recompute == std::vector<RecomputeChoice>{{.policy = RecomputePolicy::full, .layers = {}},
                                                       {.policy = RecomputePolicy::none, .layers = {}},
                                                       {RecomputePolicy::full, {.method = Method::first, .count = 3}},
                                                       {RecomputePolicy::full, {.method = Method::every, .count = 2}}});
  for (const char* bad : {"recompute=full/first0", "recompute=none/first2", "recompute=full/last2", "recompute=full/",
                          "recompute=full/first0..2", "recompute=none/every1..2", "recompute=full/first2..100001"}) {
    CHECK_THROWS_WITH(apply_grid_spec(grid, bad),
                      Contains("expected none, selective, full, full/firstN, full/everyK or full/uniformN (N, K >= 1"));
  }
  CHECK_THROWS_WITH(apply_grid_spec(grid, "recompute=full/first4..2"), Contains("expected a range a..b with a <= b"));
  // A range of counts: one value each, in order, without repeats.
  apply_grid_spec(grid, "recompute=none,full/first2..4,full/first3,full/every2..2");
  CHECK(grid.recompute == std::vector<RecomputeChoice>{{.policy = RecomputePolicy::none, .layers = {}},
                                                       {RecomputePolicy::full, {.method = Method::first, .count = 2}},
                                                       {RecomputePolicy::full, {.method = Method::first, .count = 3}},
                                                       {RecomputePolicy::full, {.method = Method::first, .count = 4}},
                                                       {RecomputePolicy::full, {.method = Method::every, .count = 2}}});
  CHECK_THROWS_WITH(apply_grid_spec(grid, "tq=1"), Contains("unknown axis 'tq' (expected tp, pp"));
  CHECK_THROWS_WITH(apply_grid_spec(grid, "tp=0"), Equals("'tp=0': expected values of at least 1"));
  CHECK_THROWS_WITH(apply_grid_spec(grid, "tp="), Contains("expected axis=values"));
  CHECK_THROWS_WITH(apply_grid_spec(grid, "pp=4..2"), Contains("expected a range a..b with a <= b"));
  CHECK_THROWS_WITH(apply_grid_spec(grid, "pp=x"), Contains("expected non-negative integers or ranges a..b"));
  CHECK_THROWS_WITH(apply_grid_spec(grid, "schedule=1f2b"),
                    Contains("expected gpipe, 1f1b, interleaved, zb-h1 or encoder-first"));
  CHECK_THROWS_WITH(apply_grid_spec(grid, "zero=4"), Contains("expected 0, 1, 2 or 3"));
  CHECK_THROWS_WITH(apply_grid_spec(grid, "sp=2"), Contains("expected 0 or 1"));
  // Hybrid sharding's group sizes; "all" (0) is ZeRO over every data-parallel rank.
  CHECK(grid.dp_shard == std::vector<int>{0});
  apply_grid_spec(grid, "dp_shard=all,8,2..4,all,node");
  CHECK(grid.dp_shard == std::vector<int>{0, 8, 2, 3, 4, kNodeShard});
  CHECK_THROWS_WITH(apply_grid_spec(grid, "dp_shard=0"), Equals("'dp_shard=0': expected values of at least 1"));
  CHECK_THROWS_WITH(apply_grid_spec(grid, "dp_shard=rack"),
                    Equals("'dp_shard=rack': expected all, node, or numbers of data-parallel ranks (ranges a..b)"));
  SweepGrid read_back;
  apply_grid_spec(read_back, grid_spec(grid));
  CHECK(read_back.dp_shard == grid.dp_shard);
  // A later term for an axis replaces an earlier one, so that a spec can be extended.
  apply_grid_spec(grid, "tp=1 pp=2 tp=2,4");
  CHECK(grid.tp == std::vector<int>{2, 4});
}

TEST_CASE("a grid's combinations bound the plans it enumerates, and too many are refused before any is",
          "[sweep][errors]") {
  SweepGrid grid;
  apply_grid_spec(grid, "tp=1,2 pp=1,2,4 cp=1 vpp=1,2 mb=1,2 recompute=none zero=0 schedule=1f1b,interleaved sp=1");
  // 2 TP x 3 PP x 1 CP x 2 VPP x 2 micro-batch sizes x 2 schedules, one value on every other axis.
  CHECK(grid_combinations(grid) == 48);
  CHECK(enumerate_plans(small_base(), grid, 8).plans.size() <= 48);
  for (const char* name : {"llama3-405b-16384xh100", "vlm-s-16xh800", "llava-ov-llama3-8b-32xa100-meshes"}) {
    INFO(name);
    const JsonDocument document = JsonDocument::parse_file(test::experiment(name));
    const TrainingScenario base = load_sweep_scenario(document.root());
    const SweepGrid defaults = default_grid(base, base.cluster.gpus);
    CHECK(static_cast<std::size_t>(grid_combinations(defaults)) >=
          enumerate_plans(base, defaults, base.cluster.gpus).plans.size());
  }
  apply_grid_spec(grid, "pp=1..1000 vpp=1..100000");
  CHECK(grid_combinations(grid) == 2LL * 1000 * 100000 * 2 * 2);
  CHECK_THROWS_WITH(check_grid(grid, small_base()),
                    Contains("its axes make 800,000,000 combinations, up to as many plans to enumerate at about "
                             "16.00 KiB each; the limit is") &&
                        Contains("narrow an axis"));
}

TEST_CASE("the dp_shard axis adds a hybrid plan where its group divides dp and ZeRO shards", "[sweep][hybrid]") {
  SweepGrid grid;
  apply_grid_spec(grid, "tp=1,2,4 pp=1 cp=1 vpp=1 mb=1 recompute=none zero=0,3 schedule=1f1b sp=1 dp_shard=all,2");
  const PlanEnumeration plans = enumerate_plans(small_base(), grid, 8);
  // TP1 DP8, TP2 DP4: plain and groups of 2, each with zero 0 and 3; TP4 DP2: a group of 2 is
  // every DP rank, so one plan for each zero. 4 + 4 + 2 = 10, of which the two hybrid plans without
  // ZeRO are invalid.
  CHECK(plans.plans.size() == 10);
  CHECK(plans.invalid_by_reason.at("dp_shard without zero") == 2);
  CHECK(plans.valid == 8);
  int hybrid = 0;
  for (const PlanCandidate& plan : plans.plans) {
    if (!plan.valid() || plan.scenario.parallel.dp_shard == 0) continue;
    ++hybrid;
    CHECK(plan.scenario.parallel.dp_shard == 2);
    CHECK_THAT(plan_label(plan.scenario), Contains("zero3/shard2"));
  }
  CHECK(hybrid == 2);
  // "node": the data-parallel ranks of one 8-GPU node, whatever tp takes of it (at TP1 the 8
  // samples do not fill 16 replicas).
  apply_grid_spec(grid, "tp=2,4 zero=3 dp_shard=node");
  std::vector<int> node_shards;
  for (const PlanCandidate& plan : enumerate_plans(small_base(16), grid, 16).plans) {
    if (plan.valid()) node_shards.push_back(plan.scenario.parallel.dp_shard);
  }
  CHECK(node_shards == std::vector<int>{4, 2});
}

TEST_CASE("uneven pipeline splits are balanced with the lightest ends", "[sweep]") {
  CHECK(balanced_stage_layers(126, 16) == std::vector<int>{7, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 7});
  CHECK(balanced_stage_layers(10, 4) == std::vector<int>{2, 3, 3, 2});
  CHECK(balanced_stage_layers(11, 4) == std::vector<int>{2, 3, 3, 3});
  CHECK(balanced_stage_layers(8, 4) == std::vector<int>{2, 2, 2, 2});
  CHECK(balanced_stage_layers(5, 1) == std::vector<int>{5});
}

// Checks that the memory estimate of every `stride`-th valid plan of `grid_spec` over the small
// Llama (under `stack`) is at most its simulated peak, on every stage; returns the valid plans.
int check_memory_estimates(const std::string& stack, const std::string& grid_spec, int stride) {
  SweepGrid grid;
  apply_grid_spec(grid, grid_spec);
  const JsonDocument document = JsonDocument::parse_text(R"({
      "model": {"base": "llama3-8b", "layers": 8, "hidden": 1024, "ffn_hidden": 4096, "heads": 16, "kv_heads": 4,
                "vocab": 32000},
      "cluster": {"base": "dgx-h100", "gpus": 16}, "stack": ")" +
                                                             stack + R"(",
      "training": {"global_batch": 32, "seq_len": 4096}})",
                                                         "test");
  const TrainingScenario base = load_sweep_scenario(document.root());
  const PlanEnumeration plans = enumerate_plans(base, grid, 16);
  int valid = 0;
  for (const PlanCandidate& candidate : plans.plans) {
    if (!candidate.valid() || ++valid % stride != 0) continue;  // a spread of the valid plans keeps it quick
    const std::vector<Bytes> estimate = estimate_stage_memory(candidate.scenario);
    const auto run = test::run_training(candidate.scenario);
    INFO(plan_label(candidate.scenario));
    for (std::size_t s = 0; s < estimate.size(); ++s) CHECK(estimate[s] <= run.report.stages[s].peak_memory);
  }
  return valid;
}

TEST_CASE("the memory estimate is a lower bound of the simulated peak", "[sweep][memory]") {
  CHECK(check_memory_estimates("megatron-core",
                               "tp=1,2,4 pp=1,2,4 cp=1,2 vpp=1,2 mb=1,2 recompute=none,full,full/first1 zero=0,1,3 "
                               "schedule=gpipe,1f1b,interleaved,zb-h1 sp=1",
                               7) > 100);
}

TEST_CASE("the memory estimate is a lower bound of the simulated peak under per-op checkpointing",
          "[sweep][memory][recompute]") {
  CHECK(check_memory_estimates(
            "pytorch-eager",
            "tp=1,2 pp=1,2,4 cp=1 vpp=1,2 mb=1,2 recompute=selective zero=0,1,3 schedule=gpipe,1f1b,interleaved sp=1",
            3) > 30);
}

TEST_CASE("a sweep ranks by throughput and does not depend on the thread count", "[sweep]") {
  const TrainingScenario base = small_base();
  SweepGrid grid = default_grid(base, 8);
  apply_grid_spec(grid, "tp=1,2 pp=1,2 mb=1,2 recompute=none zero=0,1 schedule=1f1b,zb-h1");
  SweepOptions one;
  one.threads = 1;
  SweepOptions two;
  two.threads = 2;
  const SweepResult a = run_sweep(base, grid, 8, one);
  const SweepResult b = run_sweep(base, grid, 8, two);
  REQUIRE(a.plans.size() == b.plans.size());
  REQUIRE(a.feasible > 2);
  for (std::size_t i = 0; i < a.plans.size(); ++i) {
    CHECK(a.plans[i].label == b.plans[i].label);
    CHECK(a.plans[i].status == b.plans[i].status);
  }
  for (std::size_t i = 1; i < static_cast<std::size_t>(a.feasible); ++i) {
    CHECK(a.plans[i - 1].report->tokens_per_s >= a.plans[i].report->tokens_per_s);
  }
}

TEST_CASE("pruning keeps the top k of a sweep of every plan, whatever the thread count or reuse", "[sweep]") {
  const TrainingScenario base = test::sweep_scenario_from(fmt::format(
      R"({{"model": {}, "cluster": {{"base": "dgx-h100", "gpus": 32}}, "training": {{"global_batch": 64, "seq_len": 4096}}}})",
      test::kSmallLlama));
  SweepGrid grid = default_grid(base, 32);
  apply_grid_spec(grid, "tp=1,2 pp=1,2,4 cp=1,2 vpp=1,2 zero=1 mb=1,2");
  constexpr std::size_t kTop = 3;
  SweepOptions every;
  every.threads = 2;
  const SweepResult all = run_sweep(base, grid, 32, every);
  SweepOptions pruning = every;
  pruning.prune_beyond_top = kTop;
  const SweepResult pruned = run_sweep(base, grid, 32, pruning);
  pruning.threads = 1;
  pruning.reuse = false;
  const SweepResult pruned_alone = run_sweep(base, grid, 32, pruning);

  REQUIRE(all.pruned == 0);
  REQUIRE(all.simulated == 264);  // 288 plans, 24 invalid
  CHECK(pruned.pruned + pruned.simulated == 264);
  CHECK(pruned.simulated < 100);  // the first blocks of 32 plans found the top 3
  for (std::size_t i = 0; i < kTop; ++i) {
    CHECK(pruned.plans[i].label == all.plans[i].label);
    CHECK(pruned.plans[i].report->tokens_per_s == all.plans[i].report->tokens_per_s);
  }
  // Every pruned plan was simulated by the full sweep slower than the k-th best, and its bound
  // said so before.
  std::map<std::string, const PlanOutcome*> simulated;
  for (const PlanOutcome& plan : all.plans) simulated.emplace(plan.label, &plan);
  const double kth = all.plans[kTop - 1].report->tokens_per_s;
  for (const PlanOutcome& plan : pruned.plans) {
    if (plan.status != PlanStatus::pruned) continue;
    INFO(plan.label);
    CHECK(simulated.at(plan.label)->report->tokens_per_s < kth);
    CHECK(static_cast<double>(*plan.iteration_bound) / kNsPerSecond > all.plans[kTop - 1].report->iteration_time_s);
    CHECK_THAT(plan.reason, Contains("its compute alone takes at least") && Contains("each of the 3 best plans"));
  }
  // Which plans are pruned depends neither on the threads nor on reuse.
  REQUIRE(pruned.plans.size() == pruned_alone.plans.size());
  for (std::size_t i = 0; i < pruned.plans.size(); ++i) {
    CHECK(pruned.plans[i].label == pruned_alone.plans[i].label);
    CHECK(pruned.plans[i].status == pruned_alone.plans[i].status);
  }
}

}  // namespace
}  // namespace weft
