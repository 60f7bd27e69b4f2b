#include <catch2/catch.hpp>

#include "kernels/live/live_executor.hpp"
#include "kernels/live/measured_trace.hpp"
#include "simulator/workload/modules/op_factory.hpp"

namespace weft {
namespace {

PlanAction transfer_action(ActionKind kind, int peer_stage) {
  PlanAction action;
  action.kind = kind;
  action.transfer = 0;
  action.peer_stage = peer_stage;
  action.bytes = 1 << 20;
  action.name = "activation mb0 stage 0 -> 1";
  return action;
}

PlanOp gemm_op() {
  PlanOp gemm;
  gemm.name = "gemm";
  gemm.work = gemm_work(64, 64, 64, Dtype::bf16);
  return gemm;
}

PlanAction forward_with(const PlanOp& op) {
  PlanAction action;
  action.kind = ActionKind::forward_stage;
  action.microbatch = 0;
  action.ops = {op};
  return action;
}

// Two pipeline stages of one rank each: stage 0 runs a GEMM and sends its activation to stage 1,
// which receives it and runs a GEMM.
ExecutionPlan two_stage_plan() {
  const PlanOp gemm = gemm_op();
  ExecutionPlan plan;
  plan.dims.pp = 2;
  plan.programs.resize(2);
  plan.programs[0].actions = {forward_with(gemm), transfer_action(ActionKind::isend, 1),
                              transfer_action(ActionKind::wait_isend, 1)};
  plan.programs[1].stage = 1;
  plan.programs[1].actions = {transfer_action(ActionKind::irecv, 0), transfer_action(ActionKind::wait_irecv, 0),
                              forward_with(gemm)};
  plan.program_of_rank = {0, 1};
  return plan;
}

// Two TP ranks of one stage, each a GEMM and then an all-reduce over "tp".
ExecutionPlan tensor_parallel_plan() {
  PlanOp reduce;
  reduce.id = 1;
  reduce.name = "tp all-reduce";
  reduce.work.op_class = OpClass::allreduce;
  reduce.work.network_bytes = 4096;
  reduce.group = "tp";
  PlanAction stage = forward_with(gemm_op());
  stage.ops.push_back(reduce);
  ExecutionPlan plan;
  plan.dims.tp = 2;
  plan.programs.resize(1);
  plan.programs[0].actions = {stage};
  plan.program_of_rank = {0, 0};
  return plan;
}

MeasuredRunInfo run_info(std::int64_t iteration_ns) {
  MeasuredRunInfo info;
  info.backend = "cpu";
  info.device = "test";
  info.warmup = 2;
  info.iteration_ns = {iteration_ns + 100, iteration_ns, iteration_ns + 300};
  info.traced_iteration = 1;
  return info;
}

// The "X" event named `name` of process `pid`.
const nlohmann::json& event(const nlohmann::json& trace, int pid, const std::string& name) {
  for (const nlohmann::json& e : trace["traceEvents"]) {
    if (e["ph"] == "X" && e["pid"] == pid && e["name"] == name) return e;
  }
  FAIL("no event " << name << " on process " << pid);
  return trace;
}

TEST_CASE("a measured op whose kernels left gaps records the time they ran", "[kernels][live]") {
  ExecutionPlan plan;
  plan.programs.resize(1);
  plan.programs[0].actions = {forward_with(gemm_op())};
  plan.program_of_rank = {0};
  // Kernels from 1000 to 4000 ns, running 2000 ns of it; then an op with no gap.
  const nlohmann::json gapped = measured_trace_json(plan, {{{0, 1000, 4000, 2000}}}, run_info(5000));
  CHECK(event(gapped, 1, "gemm")["dur"] == Approx(3.0));
  CHECK(event(gapped, 1, "gemm")["args"]["busy_us"] == Approx(2.0));
  const nlohmann::json packed = measured_trace_json(plan, {{{0, 1000, 4000, 3000}}}, run_info(5000));
  CHECK_FALSE(event(packed, 1, "gemm")["args"].contains("busy_us"));
}

TEST_CASE("a measured transfer runs from its last launch to the first sighting of its end", "[kernels][live]") {
  const ExecutionPlan plan = two_stage_plan();
  // Stage 0 sends at 1000 ns and sees the send over only at 9000, after a long op; stage 1
  // launched its receive at 1500 and, waiting, saw the message arrive at 2500.
  const std::vector<std::vector<TimedSpan>> spans = {{{0, 0, 1000}, {kTransferSpan, 1000, 9000}},
                                                     {{kTransferSpan, 1500, 2500}, {0, 2500, 4000}}};
  const nlohmann::json trace = measured_trace_json(plan, spans, run_info(4000));
  const nlohmann::json& send = event(trace, 1, "activation mb0 stage 0 -> 1");
  CHECK(send["cat"] == "send");
  CHECK(send["ts"].get<double>() == Approx(1.5));
  CHECK(send["dur"].get<double>() == Approx(1.0));
  CHECK(send["args"]["waited_us"].get<double>() == Approx(0.5));
  const nlohmann::json& receive = event(trace, 2, "activation mb0 stage 0 -> 1");
  CHECK(receive["cat"] == "recv");
  CHECK(receive["ts"].get<double>() == Approx(1.5));
  CHECK(receive["dur"].get<double>() == Approx(1.0));
  CHECK(receive["args"]["waited_us"].get<double>() == 0.0);
  CHECK(event(trace, 2, "gemm")["ts"].get<double>() == Approx(2.5));

  // A send that completed on launch, before the receiver asked for it, takes no time.
  const std::vector<std::vector<TimedSpan>> buffered = {{{0, 0, 1000}, {kTransferSpan, 1000, 1200}},
                                                        {{kTransferSpan, 1500, 6000}, {0, 6000, 7000}}};
  const nlohmann::json early = measured_trace_json(plan, buffered, run_info(7000));
  CHECK(event(early, 1, "activation mb0 stage 0 -> 1")["dur"].get<double>() == 0.0);
  CHECK(event(early, 2, "activation mb0 stage 0 -> 1")["dur"].get<double>() == Approx(4.5));
}

TEST_CASE("a measured collective starts when the last member of its group launched it", "[kernels][live]") {
  const ExecutionPlan plan = tensor_parallel_plan();
  // Rank 1's GEMM ran 2 us longer: rank 0 waited 2 us in the all-reduce for it.
  const std::vector<std::vector<TimedSpan>> spans = {{{0, 0, 1000}, {1, 1000, 3500}}, {{0, 0, 3000}, {1, 3000, 3500}}};
  const nlohmann::json trace = measured_trace_json(plan, spans, run_info(3500));
  for (int pid : {1, 2}) {
    const nlohmann::json& reduce = event(trace, pid, "tp all-reduce");
    CHECK(reduce["ts"].get<double>() == Approx(3.0));
    CHECK(reduce["dur"].get<double>() == Approx(0.5));
    CHECK(reduce["args"]["group"] == "tp");
  }
  CHECK(event(trace, 1, "tp all-reduce")["args"]["waited_us"].get<double>() == Approx(2.0));
  CHECK(event(trace, 2, "tp all-reduce")["args"]["waited_us"].get<double>() == 0.0);
  // The header: the traced iteration's time, and every measured one.
  CHECK(trace["otherData"]["makespan_ns"] == 3500);
  CHECK(trace["otherData"]["measured"]["iteration_ns"].size() == 3);
  CHECK(trace["otherData"]["measured"]["ranks"] == 2);
}

}  // namespace
}  // namespace weft
