// Execution plans timed by the engine: issue order, transfers and their waits, asynchronous ops,
// collectives costed for their communicator.
#include "simulator/plan/plan_graph.hpp"

#include <catch2/catch.hpp>

#include "simulator/core/input_error.hpp"
#include "simulator/engine/simulation.hpp"

namespace weft {
namespace {

using Catch::Matchers::Contains;

ClusterSpec h100_node() {
  const JsonDocument document = JsonDocument::parse_text(R"({"base": "dgx-h100", "gpus": 8})", "cluster.json");
  return load_cluster_spec(document.root());
}

PlanOp gemm(std::uint32_t id, std::int64_t n, const std::string& name) {
  PlanOp op;
  op.id = id;
  op.name = name;
  op.work.op_class = OpClass::gemm;
  op.work.flops = 2.0 * static_cast<double>(n * n * n);
  op.work.memory_bytes = 3 * n * n * 2;
  op.work.shape = {n, n, n};
  return op;
}

PlanOp allreduce(std::uint32_t id, std::int64_t bytes, bool async) {
  PlanOp op;
  op.id = id;
  op.name = "allreduce";
  op.work.op_class = OpClass::allreduce;
  op.work.network_bytes = bytes;
  op.work.shape = {bytes};
  op.group = "tp";
  op.async = async;
  op.stream = async ? "tp comm" : "compute";
  return op;
}

PlanAction stage(ActionKind kind, std::vector<PlanOp> ops) {
  PlanAction action;
  action.kind = kind;
  action.chunk = 0;
  action.microbatch = 0;
  action.ops = std::move(ops);
  return action;
}

PlanAction transfer(ActionKind kind, std::uint32_t id, int peer, std::int64_t bytes = 1 << 24) {
  PlanAction action;
  action.kind = kind;
  action.transfer = id;
  action.peer_stage = peer;
  action.tag = id;
  action.bytes = bytes;
  return action;
}

// TP2 PP2 on one node: stage 0 computes A and sends it; stage 1 receives it, then computes B.
ExecutionPlan two_stages() {
  ExecutionPlan plan;
  plan.dims = {2, 1, 1, 2};
  PlanProgram first{"stage 0", 0, {}};
  first.actions = {stage(ActionKind::forward_stage, {gemm(0, 4096, "A"), allreduce(1, 1 << 26, false)}),
                   transfer(ActionKind::isend, 0, 1), transfer(ActionKind::wait_isend, 0, 1),
                   stage(ActionKind::forward_stage, {gemm(2, 2048, "C")})};
  PlanProgram second{"stage 1", 1, {}};
  second.actions = {transfer(ActionKind::irecv, 0, 0), transfer(ActionKind::wait_irecv, 0, 0),
                    stage(ActionKind::forward_stage, {gemm(0, 8192, "B")})};
  plan.programs = {first, second};
  plan.program_of_rank = {0, 0, 1, 1};
  return plan;
}

OpId op_named(const Graph& graph, std::string_view name) {
  for (std::uint32_t i = 0; i < graph.op_count(); ++i) {
    if (graph.op_name(OpId(i)) == name) return OpId(i);
  }
  FAIL("no op " << name);
  return OpId::none();
}

TEST_CASE("a plan's ops run in issue order and a receiver waits for the transfer", "[plan][plan_graph]") {
  const PlanGraph planned = plan_graph(two_stages(), h100_node());
  const Graph& graph = planned.graph;
  const SimulationResult result = simulate(graph, *planned.cost_model);
  const OpId a = op_named(graph, "A");
  const OpId reduce = op_named(graph, "allreduce");
  const OpId send = op_named(graph, "transfer 0");
  const OpId b = op_named(graph, "B");
  const OpId c = op_named(graph, "C");
  // The rank's host issues A first, at the bundled profile's host issue time; the ops after it
  // wait for what they depend on, which the host issued long before, and the all-reduce, on the
  // same stream, for the device's gap after A.
  const TimeNs host = planned.cost_model->host_issue_ns(graph.op_work(a).op_class, h100_node().gpu);
  const TimeNs gap = planned.cost_model->kernel_gap_ns(h100_node().gpu);
  CHECK(host > 0);
  CHECK(gap > 0);
  CHECK(result.start(a) == host);
  CHECK(result.start(reduce) == result.end(a) + gap);
  CHECK(result.start(send) == result.end(reduce));  // the isend comes after the stage
  CHECK(result.start(b) == result.end(send));       // B waits for its input
  CHECK(result.start(c) == result.end(send));       // C waits for the send to finish (wait_isend)
  CHECK(result.makespan == std::max(result.end(b), result.end(c)));
  // Each op costs what the cost model gives its work: the all-reduce over the two TP ranks of a
  // node, the send between two GPUs of the node.
  const DeviceSpec& gpu = h100_node().gpu;
  CHECK(result.duration(a) == planned.cost_model->duration(graph.op_work(a), gpu));
  CHECK(result.duration(reduce) > 0);
  CHECK(result.duration(send) > 0);
  // Two programs, labelled as their first ranks are in measured traces, and one link.
  CHECK(graph.device(graph.op_device(a)).name == "stage 0 / tp 0 / dp 0");
  CHECK(graph.device(graph.op_device(b)).name == "stage 1 / tp 0 / dp 0");
}

TEST_CASE("an asynchronous op overlaps compute until an op lists it in after", "[plan][plan_graph]") {
  ExecutionPlan plan;
  plan.dims = {2, 1, 1, 1};
  PlanOp reduce = allreduce(1, 1 << 28, true);
  PlanOp wait = gemm(3, 1024, "D");
  wait.after = {1};
  plan.programs = {
      {"stage 0", 0, {stage(ActionKind::backward_stage, {gemm(0, 4096, "A"), reduce, gemm(2, 1024, "C"), wait})}}};
  plan.program_of_rank = {0, 0};
  const PlanGraph planned = plan_graph(plan, h100_node());
  const SimulationResult result = simulate(planned.graph, *planned.cost_model);
  const Graph& graph = planned.graph;
  const OpId a = op_named(graph, "A");
  const OpId all = op_named(graph, "allreduce");
  const OpId c = op_named(graph, "C");
  const OpId d = op_named(graph, "D");
  CHECK(result.start(all) == result.end(a));  // on its own stream: no gap after A
  CHECK(result.start(c) == result.end(a) + planned.cost_model->kernel_gap_ns(h100_node().gpu));  // not after it
  REQUIRE(result.end(all) > result.end(c));
  CHECK(result.start(d) == result.end(all));
}

TEST_CASE("a transfer with one side only is refused", "[plan][plan_graph][errors]") {
  ExecutionPlan plan = two_stages();
  plan.programs[1].actions.erase(plan.programs[1].actions.begin());  // no irecv
  CHECK_THROWS_AS(plan_graph(plan, h100_node()), InputError);
  CHECK_THROWS_WITH(plan_graph(plan, h100_node()), Contains("transfer 0: the plan has its isend but not its irecv"));
}

}  // namespace
}  // namespace weft
