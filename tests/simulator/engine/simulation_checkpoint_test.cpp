// Checkpoint-restore must be exact: a resumed simulation of the same work in a new order, with
// new edges, gives what simulating every op of the reordered graph gives.
#include "simulator/engine/simulation_checkpoint.hpp"

#include <algorithm>

#include <fmt/format.h>
#include <catch2/catch.hpp>

#include "simulator/core/input_error.hpp"
#include "simulator/graph/subgraph.hpp"
#include "tests/simulator/workload/training_test_support.hpp"
#include "tests/support/random_composite_graph.hpp"
#include "tests/support/random_ranking.hpp"
#include "tests/support/simulation_comparison.hpp"
#include "tests/support/unit_platform.hpp"

namespace weft {
namespace {

using test::all_op_times;
using test::require_same_devices;

constexpr int kCases = 5000;

// The reissued graph is the original with ops renumbered through op_of and `edges` added: each
// op keeps its work, stream, name, tensors (and weak flags), composite binding, collective, and
// control and signal successors. Checked against the original graph, not the rebuilt one's own
// simulation, so that an edge lost in the rebuild cannot go unseen.
void require_renumbered_copy(const Graph& original, const ReissuedGraph& reissued,
                             std::span<const std::pair<OpId, OpId>> edges = {}) {
  const Graph& copy = reissued.graph;
  REQUIRE(copy.op_count() == original.op_count());
  REQUIRE(copy.tensor_count() == original.tensor_count());
  auto mapped = [&](OpId op) { return reissued.op_of[op.value()]; };
  for (std::size_t i = 0; i < original.op_count(); ++i) {
    const OpId old = OpId::at(i);
    const OpId op = mapped(old);
    REQUIRE(copy.op_work_id(op) == original.op_work_id(old));
    REQUIRE(copy.op_stream(op) == original.op_stream(old));
    REQUIRE(copy.op_name(op) == original.op_name(old));
    REQUIRE(std::ranges::equal(copy.op_inputs(op), original.op_inputs(old)));
    for (std::size_t k = 0; k < original.op_inputs(old).size(); ++k) {
      REQUIRE(copy.input_is_weak(op, k) == original.input_is_weak(old, k));
    }
    REQUIRE(std::ranges::equal(copy.op_outputs(op), original.op_outputs(old)));
    std::vector<OpId> control;
    for (OpId successor : original.control_successors(old)) control.push_back(mapped(successor));
    for (const auto& [before, after] : edges) {
      if (before == old) control.push_back(mapped(after));
    }
    std::vector<OpId> copied(copy.control_successors(op).begin(), copy.control_successors(op).end());
    std::ranges::sort(control);
    std::ranges::sort(copied);
    REQUIRE(copied == control);
    REQUIRE(copy.is_composite(op) == original.is_composite(old));
    if (original.is_composite(old)) {
      const CompositeId before = original.op_composite(old);
      const CompositeId after = copy.op_composite(op);
      REQUIRE(copy.composite(after).subgraph == original.composite(before).subgraph);
      REQUIRE(std::ranges::equal(copy.composite_streams(after), original.composite_streams(before)));
      std::vector<std::pair<std::uint32_t, OpId>> signals;
      for (const auto& [port, successor] : original.signal_successors(before))
        signals.emplace_back(port, mapped(successor));
      std::vector<std::pair<std::uint32_t, OpId>> copied_signals(copy.signal_successors(after).begin(),
                                                                 copy.signal_successors(after).end());
      std::ranges::sort(signals);
      std::ranges::sort(copied_signals);
      REQUIRE(copied_signals == signals);
    }
    REQUIRE(copy.op_collective(op).valid() == original.op_collective(old).valid());
    if (original.op_collective(old).valid()) {
      std::vector<OpId> members;
      for (OpId member : original.collective_members(original.op_collective(old))) members.push_back(mapped(member));
      std::vector<OpId> copied_members(copy.collective_members(copy.op_collective(op)).begin(),
                                       copy.collective_members(copy.op_collective(op)).end());
      std::ranges::sort(members);
      std::ranges::sort(copied_members);
      REQUIRE(copied_members == members);
    }
  }
}

SimulationOptions options_with_memory() {
  SimulationOptions options;
  options.record_memory_timeline = true;
  return options;
}

TEST_CASE("resuming in the original order gives the checkpoint's own answer", "[engine][checkpoint]") {
  for (int seed = 0; seed < 200; ++seed) {
    INFO("seed " << seed);
    auto random = test::make_random_composite_graph(static_cast<std::uint64_t>(seed));
    const SimulationCheckpoint checkpoint(std::move(random.graph), random.cost_model, options_with_memory());
    const auto resumed = checkpoint.resume({});
    const Graph& graph = checkpoint.graph();
    for (std::size_t i = 0; i < graph.op_count(); ++i) REQUIRE(resumed.reissued.op_of[i].value() == i);
    REQUIRE(resumed.result.makespan == checkpoint.result().makespan);
    REQUIRE(all_op_times(resumed.reissued.graph, resumed.result) == all_op_times(graph, checkpoint.result()));
    require_same_devices(resumed.result, checkpoint.result());
  }
}

TEST_CASE("a resumed simulation in a random order with random edges is the full simulation's answer",
          "[engine][checkpoint]") {
  int reordered = 0;
  std::int64_t hits = 0;
  std::int64_t misses = 0;
  for (int seed = 0; seed < kCases; ++seed) {
    INFO("seed " << seed);
    auto random = test::make_random_composite_graph(static_cast<std::uint64_t>(seed));
    const SimulationCheckpoint checkpoint(std::move(random.graph), random.cost_model, options_with_memory());
    const Graph& graph = checkpoint.graph();
    std::mt19937_64 rng(static_cast<std::uint64_t>(seed) * 7919 + 1);
    const std::vector<OpId> ranking = test::random_ranking(graph, rng);
    REQUIRE(ranking.size() == graph.op_count());
    const auto edges = test::random_edges(graph, ranking, seed % 4, rng);
    const ScheduleCacheStats before = checkpoint.stats();
    const auto resumed = checkpoint.resume(stream_order_of(graph, ranking), edges);
    require_renumbered_copy(graph, resumed.reissued, edges);
    const ScheduleCacheStats after = checkpoint.stats();
    hits += after.hits - before.hits;
    misses += after.misses - before.misses;

    SimulationOptions full = options_with_memory();
    full.reuse = false;
    const SimulationResult expected = simulate(resumed.reissued.graph, random.cost_model, full);
    REQUIRE(resumed.result.makespan == expected.makespan);
    REQUIRE(all_op_times(resumed.reissued.graph, resumed.result) == all_op_times(resumed.reissued.graph, expected));
    require_same_devices(resumed.result, expected);
    // The streams issue in the order asked for, and the edges hold.
    StreamOrder asked = stream_order_of(graph, ranking);
    for (auto& ops : asked) {
      for (OpId& op : ops) op = resumed.reissued.op_of[op.value()];
    }
    REQUIRE(issue_order(resumed.reissued.graph) == asked);
    for (const auto& [a, b] : edges) {
      REQUIRE(expected.end(resumed.reissued.op_of[a.value()]) <= expected.start(resumed.reissued.op_of[b.value()]));
    }
    reordered += resumed.result.makespan != checkpoint.result().makespan ? 1 : 0;
  }
  WARN("cases whose makespan the new order changed: " << reordered << " of " << kCases << "; cache hits " << hits
                                                      << ", misses " << misses << " while resuming");
  CHECK(reordered > kCases / 10);  // the orders do change the answer
  CHECK(hits > misses);            // and the checkpoint's schedules answer most composites
}

TEST_CASE("resuming a training pipeline in random orders of its passes is exact", "[engine][checkpoint]") {
  // A small Llama on PP4 with 8 microbatches, 1F1B and the split-weight-pass zero-bubble
  // schedule: the passes on each stage are reordered at random, as a schedule search would.
  for (const char* schedule : {"1f1b", "zb-h1"}) {
    INFO(schedule);
    const TrainingScenario scenario = test::scenario_from(fmt::format(
        R"({{"model": {{"base": "llama3-8b", "layers": 8, "hidden": 1024, "ffn_hidden": 3584, "heads": 8,
                       "kv_heads": 4}},
            "cluster": {{"base": "dgx-h100", "gpus": 8}},
            "parallel": {{"tp": 2, "pp": 4, "dp": 1, "schedule": "{}"}},
            "training": {{"global_batch": 8, "seq_len": 2048}}}})",
        schedule));
    const TrainingWorkload workload = build_training_workload(scenario, {.name_ops = false});
    const SimulationCheckpoint checkpoint(workload.graph, *workload.cost_model, options_with_memory());
    std::mt19937_64 rng(42);
    for (int k = 0; k < 20; ++k) {
      INFO("order " << k);
      const auto resumed =
          checkpoint.resume(stream_order_of(checkpoint.graph(), test::random_ranking(checkpoint.graph(), rng)));
      require_renumbered_copy(checkpoint.graph(), resumed.reissued);
      SimulationOptions full = options_with_memory();
      full.reuse = false;
      const SimulationResult expected = simulate(resumed.reissued.graph, *workload.cost_model, full);
      REQUIRE(resumed.result.makespan == expected.makespan);
      REQUIRE(all_op_times(resumed.reissued.graph, resumed.result) == all_op_times(resumed.reissued.graph, expected));
      require_same_devices(resumed.result, expected);
    }
    CHECK(checkpoint.stats().hits > 0);
  }
}

// Two composites of one template on a GPU's compute and comm streams; the second reads the
// first's output.
struct TwoComposites {
  Graph graph;
  RooflineCostModel cost_model;
  StreamId compute;
  StreamId comm;
};

TwoComposites two_composites() {
  test::UnitPlatform inner;
  const DeviceId inner_gpu = inner.add_gpu("gpu");
  const TensorId x = inner.tensor("x", inner_gpu, 8);
  const OpId matmul = inner.op("matmul", inner.compute(inner_gpu), 10);
  inner.builder().add_input(matmul, x);
  const TensorId y = inner.tensor("y", inner_gpu, 8);
  inner.builder().add_output(matmul, y);
  const OpId send = inner.op("send", inner.comm(inner_gpu), 4, OpClass::send);
  inner.connect(matmul, send);
  auto layer =
      std::make_shared<const Subgraph>("layer", inner.build(), std::vector<TensorId>{x}, std::vector<TensorId>{y});
  test::UnitPlatform p;
  const DeviceId gpu = p.add_gpu("gpu");
  const SubgraphId id = p.builder().add_subgraph(layer);
  const TensorId x0 = p.tensor("x0", gpu, 8);
  const TensorId x1 = p.tensor("x1", gpu, 8);
  const TensorId x2 = p.tensor("x2", gpu, 8);
  const std::vector<StreamId> streams{p.compute(gpu), p.comm(gpu)};
  p.builder().add_composite("layer0", id, streams, std::vector<TensorId>{x0}, std::vector<TensorId>{x1});
  p.builder().add_composite("layer1", id, streams, std::vector<TensorId>{x1}, std::vector<TensorId>{x2});
  p.op("other", p.compute(gpu), 5);
  RooflineCostModel cost_model = p.cost_model();
  return {p.build(), std::move(cost_model), streams[0], streams[1]};
}

TEST_CASE("a resumed order that moves an op gives the hand-computed timeline", "[engine][checkpoint]") {
  auto ops = two_composites();
  const StreamId compute = ops.compute;
  const SimulationCheckpoint checkpoint(std::move(ops.graph), ops.cost_model);
  // As built: layer0 [0,14) (matmul [0,10), send [10,14)), layer1 [10,24), other [20,25).
  CHECK(checkpoint.result().makespan == 25);
  StreamOrder order(compute.value() + 1);
  order[compute.value()] = {OpId(2), OpId(0), OpId(1)};  // other first
  const auto resumed = checkpoint.resume(order);
  // other [0,5), layer0 [5,19), layer1 [15,29).
  CHECK(resumed.result.start(resumed.reissued.op_of[2]) == 0);
  CHECK(resumed.result.start(resumed.reissued.op_of[0]) == 5);
  CHECK(resumed.result.end(resumed.reissued.op_of[1]) == 29);
  CHECK(resumed.result.makespan == 29);
  // An added edge layer1 -> other puts other last again, after layer1 ends.
  const std::pair<OpId, OpId> edge{OpId(1), OpId(2)};
  StreamOrder last(compute.value() + 1);
  last[compute.value()] = {OpId(0), OpId(1), OpId(2)};
  const auto after = checkpoint.resume(last, std::span(&edge, 1));
  CHECK(after.result.start(after.reissued.op_of[2]) == 24);
  CHECK(after.result.makespan == 29);
}

TEST_CASE("a resumed order must list each stream's ops once, agree on composites and not deadlock",
          "[engine][checkpoint]") {
  auto ops = two_composites();
  const StreamId compute = ops.compute;
  const StreamId comm = ops.comm;
  const SimulationCheckpoint checkpoint(std::move(ops.graph), ops.cost_model);
  StreamOrder order(comm.value() + 1);
  order[compute.value()] = {OpId(0), OpId(1)};  // other is missing
  CHECK_THROWS_WITH(checkpoint.resume(order), Catch::Contains("expected each op the stream issues, once"));
  order[compute.value()] = {OpId(0), OpId(1), OpId(1)};
  CHECK_THROWS_WITH(checkpoint.resume(order), Catch::Contains("expected each op the stream issues, once"));
  order[compute.value()] = {OpId(0), OpId(1), OpId(2)};
  order[comm.value()] = {OpId(1), OpId(0)};  // the composites in one order on compute, the other on comm
  CHECK_THROWS_WITH(checkpoint.resume(order), Catch::Contains("different places"));
  order[compute.value()] = {OpId(1), OpId(0), OpId(2)};  // layer1 before the layer0 it reads
  CHECK_THROWS_WITH(checkpoint.resume(order), Catch::Contains("dependency cycle"));
  const std::pair<OpId, OpId> backwards{OpId(1), OpId(0)};
  CHECK_THROWS_WITH(checkpoint.resume({}, std::span(&backwards, 1)), Catch::Contains("dependency cycle"));
  const std::pair<OpId, OpId> unknown{OpId(0), OpId(7)};
  CHECK_THROWS_WITH(checkpoint.resume({}, std::span(&unknown, 1)), Catch::Contains("unknown op"));
  const std::pair<OpId, OpId> itself{OpId(2), OpId(2)};
  CHECK_THROWS_WITH(checkpoint.resume({}, std::span(&itself, 1)), Catch::Contains("depends on itself"));
  CHECK_THROWS_AS(stream_order_of(checkpoint.graph(), std::vector<OpId>{OpId(0), OpId(0), OpId(1)}), InputError);
}

}  // namespace
}  // namespace weft
