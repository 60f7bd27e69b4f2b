// Compute slowed by the data-parallel collectives it overlaps (training_collective_contention.cpp):
// the windows the graph gives the slowdown, checked against the closed form of
// collective_contention.hpp on the simulated times of the ops themselves.
#include <catch2/catch.hpp>

#include <algorithm>
#include <string>
#include <vector>

#include "tests/simulator/workload/training_test_support.hpp"

namespace weft {
namespace {

using test::kSmallLlama;
using test::run_training;
using test::scenario_from;

// kSmallLlama (8 layers) on one DGX H100 as TP2 DP4, 4 microbatches per replica.
std::string data_parallel(int zero, bool contention = true) {
  return R"({"model": )" + kSmallLlama + R"(, "cluster": {"base": "dgx-h100", "gpus": 8},
    "parallel": {"tp": 2, "dp": 4, "zero": )" +
         std::to_string(zero) + R"(}, "training": {"global_batch": 16, "micro_batch": 1, "seq_len": 2048},
    "options": {"collective_contention": )" +
         (contention ? "true" : "false") + "}}";
}

bool name_has(std::string_view name, std::string_view part) { return name.find(part) != std::string_view::npos; }

// The ops of the first rank whose names contain every one of `parts`.
std::vector<OpId> first_rank_ops(const test::TrainingRun& run, std::vector<std::string_view> parts) {
  const Graph& graph = run.workload.graph;
  const DeviceId device = run.workload.ranks.front().device;
  std::vector<OpId> ops;
  for (std::uint32_t i = 0; i < graph.op_count(); ++i) {
    const OpId op(i);
    const std::string_view name = graph.op_name(op);
    if (graph.op_device(op) != device) continue;
    if (std::all_of(parts.begin(), parts.end(), [&](std::string_view part) { return name_has(name, part); }))
      ops.push_back(op);
  }
  return ops;
}

bool is_compute(const test::TrainingRun& run, OpId op) {
  return category_of(run.workload.graph.op_work(op).op_class) == OpCategory::compute;
}

// The ops' time as simulated, and alone (on every SM).
struct Window {
  double simulated = 0.0;
  double alone = 0.0;
  double max_held = 0.0;
};

Window window_of(const test::TrainingRun& run, const std::vector<OpId>& ops, const DeviceSpec& gpu) {
  Window window;
  for (OpId op : ops) {
    if (!is_compute(run, op)) continue;
    OpWork work = run.workload.graph.op_work(op);
    window.max_held = std::max(window.max_held, work.reserved_sms);
    window.simulated += static_cast<double>(run.result.duration(op));
    work.reserved_sms = 0.0;
    window.alone += static_cast<double>(run.workload.cost_model->duration(work, gpu));
  }
  return window;
}

double total_duration(const test::TrainingRun& run, const std::vector<OpId>& ops) {
  double total = 0.0;
  for (OpId op : ops) total += static_cast<double>(run.result.duration(op));
  return total;
}

// The window's end by hand: slowed to 108/132 while the collective runs (its 24 SMs of the H100's
// 132 held), at full rate after.
double by_hand(double alone, double collective) {
  return alone + std::min(alone * 24.0 / 108.0, collective * 24.0 / 132.0);
}

TEST_CASE("ZeRO-3: each layer's compute runs beside the next layer's gather and the last one's reduce-scatter",
          "[workload][contention][zero3]") {
  const TrainingScenario scenario = scenario_from(data_parallel(3));
  const auto run = run_training(scenario, {.composites = false});
  const DeviceSpec& gpu = scenario.cluster.gpu;
  REQUIRE(gpu.collective_sms == 24);
  // Units in pass order: the embedding is unit 0, layer L3 unit 4; its forward runs beside the
  // gather of unit 5, its backward (unit 5 of 10 counted from the head) beside the gather of
  // unit 6 and the reduce-scatter of unit 4 (layer L4).
  const std::vector<OpId> layer = first_rank_ops(run, {"L3.", " fwd mb1"});
  const std::vector<OpId> next_gather = first_rank_ops(run, {"param all-gather fwd mb1 unit 5"});
  REQUIRE_FALSE(layer.empty());
  REQUIRE(next_gather.size() == 1);
  // The gather runs while the layer computes.
  CHECK(run.result.start(next_gather.front()) < run.result.end(layer.back()));
  CHECK(run.result.end(next_gather.front()) > run.result.start(layer.front()));
  const Window forward = window_of(run, layer, gpu);
  const double gather = total_duration(run, next_gather);
  REQUIRE(gather > 0.0);
  CHECK(forward.max_held > 0.0);
  CHECK(forward.simulated == Approx(by_hand(forward.alone, gather)).margin(20));

  const Window backward = window_of(run, first_rank_ops(run, {"L3.", " mb1"}), gpu);
  const double beside = total_duration(run, first_rank_ops(run, {"param all-gather bwd mb1 unit 6"})) +
                        total_duration(run, first_rank_ops(run, {"grad reduce-scatter mb1 unit 4"}));
  CHECK(backward.simulated - forward.simulated == Approx(by_hand(backward.alone - forward.alone, beside)).margin(40));
}

TEST_CASE("below ZeRO-3 the last microbatch's backward runs beside the gradient buckets from the first one on",
          "[workload][contention]") {
  const TrainingScenario scenario = scenario_from(data_parallel(1));
  const auto run = run_training(scenario, {.composites = false});
  const DeviceSpec& gpu = scenario.cluster.gpu;
  // The gradient buckets, in the order they fill (the last layers first).
  std::vector<OpId> buckets;
  for (int k = 0;; ++k) {
    const std::string name = "grad reduce-scatter bucket " + std::to_string(k);
    const std::vector<OpId> bucket = first_rank_ops(run, {name});
    if (bucket.empty()) break;
    REQUIRE(bucket.size() == 1);
    buckets.push_back(bucket.front());
  }
  REQUIRE(buckets.size() >= 3);
  // mb3 is the last of the 4 microbatches: its backward makes the gradients the buckets reduce.
  std::vector<OpId> before, beside;
  TimeNs last_compute_end = 0;
  for (OpId op : first_rank_ops(run, {" mb3"})) {
    if (name_has(run.workload.graph.op_name(op), "fwd") || !is_compute(run, op)) continue;
    (run.result.start(op) < run.result.start(buckets.front()) ? before : beside).push_back(op);
    last_compute_end = std::max(last_compute_end, run.result.end(op));
  }
  REQUIRE_FALSE(before.empty());
  REQUIRE_FALSE(beside.empty());
  // Before the first bucket is full nothing runs beside the compute.
  CHECK(window_of(run, before, gpu).max_held == 0.0);
  // The last bucket waits for the pass's last gradients: it runs after the compute, so only the
  // others are beside it, and they do overlap it.
  CHECK(run.result.start(buckets.back()) >= last_compute_end);
  CHECK(run.result.start(buckets.front()) < last_compute_end);
  double reduction = 0.0;
  for (std::size_t k = 0; k + 1 < buckets.size(); ++k)
    reduction += static_cast<double>(run.result.duration(buckets[k]));
  const Window window = window_of(run, beside, gpu);
  CHECK(window.max_held > 0.0);
  CHECK(window.simulated == Approx(by_hand(window.alone, reduction)).margin(50));
  // Other microbatches, and the forward passes (their parameter gather is waited for), hold nothing.
  std::vector<OpId> earlier;
  for (OpId op : first_rank_ops(run, {" mb2"})) {
    if (!name_has(run.workload.graph.op_name(op), "fwd")) earlier.push_back(op);
  }
  REQUIRE_FALSE(earlier.empty());
  CHECK(window_of(run, earlier, gpu).max_held == 0.0);
  const std::vector<OpId> first_forward = first_rank_ops(run, {" fwd mb0"});
  REQUIRE_FALSE(first_forward.empty());
  CHECK(window_of(run, first_forward, gpu).max_held == 0.0);
}

TEST_CASE("the switch turns the slowdown off, and passes reused or built op by op agree", "[workload][contention]") {
  for (int zero : {1, 3}) {
    const auto on = run_training(scenario_from(data_parallel(zero)));
    const auto off = run_training(scenario_from(data_parallel(zero, false)));
    CHECK(on.report.iteration_time_s > off.report.iteration_time_s);
    const auto op_by_op = run_training(scenario_from(data_parallel(zero)), {.composites = false});
    CHECK(op_by_op.result.makespan == on.result.makespan);
  }
  // One replica: no collective, nothing slowed.
  const std::string single = R"({"model": )" + kSmallLlama + R"(, "cluster": {"base": "dgx-h100", "gpus": 2},
    "parallel": {"tp": 2, "zero": 1}, "training": {"global_batch": 4, "micro_batch": 1, "seq_len": 2048}})";
  const auto run = run_training(scenario_from(single), {.composites = false});
  for (std::uint32_t i = 0; i < run.workload.graph.op_count(); ++i) {
    CHECK(run.workload.graph.op_work(OpId(i)).reserved_sms == 0.0);
  }
}

TEST_CASE("a bad collective_contention option is refused with its path", "[workload][contention][errors]") {
  std::string text = data_parallel(1);
  text.replace(text.find("\"collective_contention\": true"), 29, "\"collective_contention\": 1");
  CHECK_THROWS_WITH(scenario_from(text),
                    Catch::Contains("options.collective_contention: expected true or false, got an integer"));
}

}  // namespace
}  // namespace weft
