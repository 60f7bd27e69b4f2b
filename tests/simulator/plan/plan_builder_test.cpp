#include <catch2/catch.hpp>

#include <map>

#include "simulator/engine/simulation.hpp"
#include "simulator/graph/flatten.hpp"
#include "simulator/plan/plan_builder.hpp"
#include "simulator/plan/plan_graph.hpp"
#include "simulator/workload/pipeline_schedule.hpp"
#include "tests/simulator/workload/training_test_support.hpp"
#include "tests/support/cpu_scenario.hpp"

namespace weft {
namespace {

// Megatron-Core with its TP communication run on its own, as weft live runs it.
std::string scenario_text(const std::string& parallel, int gpus,
                          const std::string& stack = R"({"base": "megatron-core", "tp_comm_overlap": false})") {
  return R"({"model": {"base": "gpt-4l-512", "layers": 4, "hidden": 128, "ffn_hidden": 512, "heads": 4, "vocab": 1024,
                       "max_positions": 64},
             "cluster": {"base": "dgx-h100", "gpus": )" +
         std::to_string(gpus) + R"(}, "stack": )" + stack + R"(, "parallel": )" + parallel +
         R"(, "training": {"global_batch": 8, "micro_batch": 1, "seq_len": 64}})";
}

ActionKind stage_kind(PassKind kind) {
  switch (kind) {
    case PassKind::forward:
      return ActionKind::forward_stage;
    case PassKind::backward:
      return ActionKind::backward_stage;
    case PassKind::weight:
      return ActionKind::weight_stage;
  }
  return ActionKind::compute;
}

// Every op the simulation ran on each rank, once, in passes that follow the schedule; each
// transfer sent once and received once between neighbouring stages; the file form reads back.
void check_plan(const TrainingScenario& scenario) {
  const test::TrainingRun run = test::run_training(scenario);
  const ExecutionPlan plan = build_execution_plan(scenario, run.workload, run.result);
  const ParallelPlan& p = scenario.parallel;
  REQUIRE(plan.world_size() == p.world_size());
  CHECK(plan.simulated_iteration_ns == run.result.makespan);
  REQUIRE(plan.programs.size() == static_cast<std::size_t>(p.pp));

  const FlatGraph flat = flatten(run.workload.graph);
  std::map<std::uint32_t, const PlanAction*> sends, receives;
  for (std::size_t s = 0; s < plan.programs.size(); ++s) {
    const PlanProgram& program = plan.programs[s];
    INFO("stage " << s);
    CHECK(program.stage == static_cast<int>(s));
    // The passes, in the schedule's order (a recompute pass comes before its backward pass).
    std::vector<std::tuple<ActionKind, int, int>> passes;
    std::size_t ops = 0;
    std::map<std::uint32_t, bool> async;
    std::map<std::uint32_t, std::size_t> launched;
    for (std::size_t a = 0; a < program.actions.size(); ++a) {
      const PlanAction& action = program.actions[a];
      if (action.kind == ActionKind::forward_stage || action.kind == ActionKind::backward_stage ||
          action.kind == ActionKind::weight_stage) {
        passes.emplace_back(action.kind, action.chunk, action.microbatch);
      }
      for (const PlanOp& op : action.ops) {
        CHECK(op.id == ops);
        for (std::uint32_t before : op.after) CHECK(async[before]);
        async[op.id] = op.async;
        ++ops;
      }
      if (action.kind == ActionKind::isend) sends[action.transfer] = &action;
      if (action.kind == ActionKind::irecv) receives[action.transfer] = &action;
      if (action.kind == ActionKind::isend || action.kind == ActionKind::irecv) launched[action.transfer] = a;
      if (action.kind == ActionKind::wait_isend || action.kind == ActionKind::wait_irecv) {
        REQUIRE(launched.contains(action.transfer));
        CHECK(launched[action.transfer] < a);
      }
    }
    std::vector<std::tuple<ActionKind, int, int>> expected;
    for (const PipelineAction& action :
         pipeline_actions(p.schedule, static_cast<int>(s), p.pp, p.vpp, static_cast<int>(scenario.microbatches()))) {
      expected.emplace_back(stage_kind(action.kind), action.chunk, action.microbatch);
    }
    CHECK(passes == expected);
    // Every op the simulation ran on the rank, once.
    const DeviceId device = run.workload.ranks[s].device;
    std::size_t simulated = 0;
    for (std::size_t i = 0; i < flat.graph.op_count(); ++i) {
      if (flat.graph.op_device(OpId(static_cast<OpId::value_type>(i))) == device) ++simulated;
    }
    CHECK(ops == simulated);
  }
  // Each transfer: one send and one receive, on neighbouring stages, of the same bytes.
  CHECK(sends.size() == receives.size());
  for (const auto& [transfer, send] : sends) {
    REQUIRE(receives.contains(transfer));
    const PlanAction* receive = receives[transfer];
    CHECK(send->tag == receive->tag);
    CHECK(send->bytes == receive->bytes);
    CHECK(std::abs(send->peer_stage - receive->peer_stage) == 1);
  }
  for (std::int64_t rank = 0; rank < plan.world_size(); ++rank) {
    CHECK(plan.programs[static_cast<std::size_t>(plan.program_of_rank[static_cast<std::size_t>(rank)])].stage ==
          plan.dims.coordinates_of(rank).pp);
  }
  // The file form reads back to the same plan.
  const nlohmann::json json = execution_plan_json(plan);
  const JsonDocument document = JsonDocument::parse_text(json.dump(), "plan");
  CHECK(execution_plan_json(read_execution_plan(document.root())) == json);
}

void check_plan(const std::string& parallel, int gpus) {
  INFO(parallel);
  check_plan(test::scenario_from(scenario_text(parallel, gpus)));
}

// The plan as weft live would run it, simulated again (plan_graph).
TimeNs replanned_makespan(const TrainingScenario& scenario, const ExecutionPlan& plan) {
  PlanGraph planned = plan_graph(plan, scenario.cluster);
  return simulate(planned.graph, *planned.cost_model).makespan;
}

TEST_CASE("plans follow the pipeline schedule and hold every simulated op", "[plan]") {
  check_plan(R"({"pp": 4, "dp": 2})", 8);
  check_plan(R"({"pp": 2, "vpp": 2, "schedule": "interleaved"})", 2);
  check_plan(R"({"pp": 2, "schedule": "zb-h1", "tp": 2, "sequence_parallel": true})", 4);
  check_plan(R"({"pp": 2, "recompute": "full", "dp": 2, "zero": 1})", 4);
  check_plan(R"({"tp": 2, "pp": 1, "schedule": "gpipe"})", 2);
}

TEST_CASE("plans of a model of several modules on one pipeline", "[plan][multimodal]") {
  // The ViT and its projector on stage 0, the language model's 4 layers over stages 1 to 3: its
  // embedding table on stage 1 and, tied to it, its head on stage 3.
  const TrainingScenario scenario = test::scenario_from(test::tiny_vlm_scenario(
      R"({"pp": 4, "modality_stages": {"vision": 1, "language": 3}})", R"({"base": "dgx-h100", "gpus": 4})"));
  check_plan(scenario);
  const test::TrainingRun run = test::run_training(scenario);
  const ExecutionPlan plan = build_execution_plan(scenario, run.workload, run.result);
  CHECK(plan.embedding_stage == 1);
  std::vector<int> embedding_holders;
  for (const PlanProgram& program : plan.programs) {
    for (const PlanAction& action : program.actions) {
      if (!action.ops.empty() && action.ops.front().group == "embedding") embedding_holders.push_back(program.stage);
    }
  }
  CHECK(embedding_holders == std::vector<int>{1, 3});
  // The communicator joins the two stages, whichever rank asks (live: a rank outside stays out).
  for (int stage = 0; stage < 4; ++stage) {
    CHECK(plan_group_members(plan, {0, 0, 0, stage}, CommGroupKind::embedding) == std::vector<int>{1, 3});
  }
  // Read back, the file keeps the embedding stage; run as planned, the iteration takes as long.
  const JsonDocument document = JsonDocument::parse_text(execution_plan_json(plan).dump(), "plan");
  CHECK(read_execution_plan(document.root()).embedding_stage == 1);
  CHECK(replanned_makespan(scenario, plan) == Approx(run.result.makespan).epsilon(0.02));
}

TEST_CASE("plans of encoders side by side feed the language model's first stage from each", "[plan][multimodal]") {
  // Modality parallelism (papers/004 §4.1): the vision encoder on stage 0, the audio encoder on
  // stage 1, the language model on stages 2 and 3.
  const TrainingScenario scenario = test::scenario_from(
      test::tiny_vlm_scenario(R"({"pp": 4, "modality_stages": {"vision": 1, "audio": 1, "language": 2}})",
                              R"({"base": "dgx-h100", "gpus": 4})", true));
  const test::TrainingRun run = test::run_training(scenario);
  const ExecutionPlan plan = build_execution_plan(scenario, run.workload, run.result);
  REQUIRE(plan.programs.size() == 4);
  // Per stage: the stages it sends to and receives from, and how many transfers each way.
  std::vector<std::map<std::pair<ActionKind, int>, int>> peers(4);
  for (const PlanProgram& program : plan.programs) {
    for (const PlanAction& action : program.actions) {
      if (action.kind == ActionKind::isend || action.kind == ActionKind::irecv)
        ++peers[static_cast<std::size_t>(program.stage)][{action.kind, action.peer_stage}];
    }
  }
  const int m = static_cast<int>(scenario.microbatches());
  using Peers = std::map<std::pair<ActionKind, int>, int>;
  // Activations forward, gradients back: every module is trained.
  CHECK(peers[0] == Peers{{{ActionKind::isend, 2}, m}, {{ActionKind::irecv, 2}, m}});
  CHECK(peers[1] == Peers{{{ActionKind::isend, 2}, m}, {{ActionKind::irecv, 2}, m}});
  CHECK(peers[2] == Peers{{{ActionKind::irecv, 0}, m},
                          {{ActionKind::irecv, 1}, m},
                          {{ActionKind::isend, 0}, m},
                          {{ActionKind::isend, 1}, m},
                          {{ActionKind::isend, 3}, m},
                          {{ActionKind::irecv, 3}, m}});
  CHECK(replanned_makespan(scenario, plan) == Approx(run.result.makespan).epsilon(0.02));
}

TEST_CASE("plans of modules on meshes of their own hand activations across TP", "[plan][multimodal][meshes]") {
  // The ViT on one rank at TP1, the language model on two at TP2 (ranks 1 and 2), one DP.
  const TrainingScenario scenario = test::scenario_from(test::tiny_vlm_scenario(
      R"({"pp": 2, "tp": 2, "dp": 1, "modality_stages": {"vision": 1, "language": 1},
          "modules": {"vision": {"tp": 1}}})",
      test::test_cpu_cluster(3)));
  check_plan(scenario);
  const test::TrainingRun run = test::run_training(scenario);
  const ExecutionPlan plan = build_execution_plan(scenario, run.workload, run.result);
  CHECK(plan.dims.positions == std::vector<PositionMesh>{{1, 1}, {2, 1}});
  CHECK(plan.program_of_rank == std::vector<int>{0, 1, 1});
  CHECK(plan_group_members(plan, {1, 0, 0, 1}, CommGroupKind::tp) == std::vector<int>{1, 2});
  CHECK(plan_group_members(plan, {0, 0, 0, 0}, CommGroupKind::tp) == std::vector<int>{0});
  const JsonDocument document = JsonDocument::parse_text(execution_plan_json(plan).dump(), "plan");
  CHECK(read_execution_plan(document.root()).dims.positions == plan.dims.positions);
  CHECK(replanned_makespan(scenario, plan) == Approx(run.result.makespan).epsilon(0.02));
}

TEST_CASE("plans of meshes of different DP relay each slot through DFLOP's communicator", "[plan][meshes]") {
  // The ViT on two replicas at TP1 (ranks 0, 1), the language model on one at TP2 (ranks 2, 3).
  const TrainingScenario scenario = test::scenario_from(test::tiny_vlm_scenario(
      R"({"pp": 2, "tp": 2, "dp": 1, "modality_stages": {"vision": 1, "language": 1},
          "modules": {"vision": {"tp": 1, "dp": 2}}})",
      test::test_cpu_cluster(4)));
  check_plan(scenario);
  const test::TrainingRun run = test::run_training(scenario);
  const ExecutionPlan plan = build_execution_plan(scenario, run.workload, run.result);
  CHECK(plan.program_of_rank == std::vector<int>{0, 0, 1, 1});
  // Each transfer's bytes are twice the slot's output: the projector's 2 images x 16 tokens of
  // width 128 in bf16, the slot (the LLM's one replica's one sample) gathered then scattered.
  for (const PlanAction& action : plan.programs[0].actions) {
    if (action.kind == ActionKind::isend) CHECK(action.bytes == 2 * (2 * 16 * 128 * 2));
  }
  CHECK(replanned_makespan(scenario, plan) == Approx(run.result.makespan).epsilon(0.02));
}

// The images an encoder replica takes of a slot of `images`, dealt whole over `replicas`, the
// first ones taking one more.
std::int64_t dealt(std::int64_t images, int replica, int replicas) {
  return images / replicas + (replica < images % replicas ? 1 : 0);
}

TEST_CASE("a relay on per-sample data carries each replica's own images", "[plan][meshes][data]") {
  // After the projector an image is 16 tokens of width 128 in bf16. Each slot k holds what
  // microbatch k of every language-model replica holds; the encoder's replicas share its images.
  constexpr std::int64_t kImageBytes = 16 * 128 * 2;
  auto scenario_with = [](const std::string& parallel, int gpus) {
    std::string text = test::tiny_vlm_scenario(parallel, test::test_cpu_cluster(gpus));
    text.insert(text.rfind('}'), R"(, "data": {"dataset": "image-text-mix", "seed": 1, "pad_to": 16, "pack": true})");
    return test::scenario_from(text);
  };
  const auto [parallel, gpus] = GENERATE(
      std::make_pair(std::string(R"({"pp": 2, "tp": 2, "dp": 1, "modality_stages": {"vision": 1, "language": 1},
                                     "modules": {"vision": {"tp": 1, "dp": 2}}})"),
                     4),
      std::make_pair(std::string(R"({"pp": 2, "tp": 1, "dp": 2, "modality_stages": {"vision": 1, "language": 1},
                                     "modules": {"vision": {"tp": 1, "dp": 1}}})"),
                     3));
  INFO(parallel);
  const TrainingScenario scenario = scenario_with(parallel, gpus);
  const test::TrainingRun run = test::run_training(scenario);
  const ExecutionPlan plan = build_execution_plan(scenario, run.workload, run.result);
  const MicrobatchShapes& shapes = *run.workload.shapes;
  const int encoders = plan.dims.dp_at(0);
  const int languages = plan.dims.dp_at(1);
  int relays = 0;
  int uneven = 0;
  for (const PlanProgram& program : plan.programs) {
    for (const PlanAction& action : program.actions) {
      if (action.kind != ActionKind::isend && action.kind != ActionKind::irecv) continue;
      INFO(action.name);
      const int k = std::stoi(action.name.substr(action.name.find(" mb") + 3));
      std::vector<std::int64_t> encoder_side;
      std::vector<std::int64_t> language_side;
      std::int64_t slot_images = 0;
      for (int l = 0; l < languages; ++l) {
        language_side.push_back(shapes.at(l, k).images * kImageBytes);
        slot_images += shapes.at(l, k).images;
      }
      for (int e = 0; e < encoders; ++e) encoder_side.push_back(dealt(slot_images, e, encoders) * kImageBytes);
      const bool forward = (program.stage == 0) == (action.kind == ActionKind::isend);
      CHECK(action.relay_shares == (forward ? encoder_side : language_side));
      CHECK(action.relay_parts == (forward ? language_side : encoder_side));
      ++relays;
      if (std::adjacent_find(encoder_side.begin(), encoder_side.end(), std::not_equal_to<>()) != encoder_side.end() ||
          std::adjacent_find(language_side.begin(), language_side.end(), std::not_equal_to<>()) != language_side.end())
        ++uneven;
    }
  }
  CHECK(relays > 0);
  CHECK(uneven > 0);  // some slot is not dealt evenly, or the check would not tell
  // The file form reads back, its relays' bytes checked against their slots.
  const nlohmann::json json = execution_plan_json(plan);
  const JsonDocument document = JsonDocument::parse_text(json.dump(), "plan");
  CHECK(execution_plan_json(read_execution_plan(document.root())) == json);
}

TEST_CASE("plans do not reshard sequence-parallel shards between meshes", "[plan][meshes]") {
  const TrainingScenario scenario = test::scenario_from(test::tiny_vlm_scenario(
      R"({"pp": 2, "tp": 2, "dp": 1, "sequence_parallel": true, "modality_stages": {"vision": 1, "language": 1},
          "modules": {"vision": {"tp": 1}}})",
      test::test_cpu_cluster(3)));
  CHECK_THROWS_WITH(check_execution_plan_scope(scenario), Catch::Contains("with sequence_parallel each rank hands on"));
}

TEST_CASE("a recompute pass precedes the backward pass it serves", "[plan]") {
  // Stage 0's chunk ends with a layer, whose recompute is a pass of its own; stage 1's ends with
  // the head, and its backward pass recomputes inside.
  const TrainingScenario scenario = test::scenario_from(scenario_text(R"({"pp": 2, "recompute": "full"})", 2));
  const test::TrainingRun run = test::run_training(scenario);
  const ExecutionPlan plan = build_execution_plan(scenario, run.workload, run.result);
  std::optional<std::pair<int, int>> pending;
  int backwards = 0;
  for (const PlanAction& action : plan.programs[0].actions) {
    if (action.kind == ActionKind::recompute_stage) pending = std::make_pair(action.chunk, action.microbatch);
    if (action.kind == ActionKind::backward_stage) {
      REQUIRE(pending);
      CHECK(*pending == std::make_pair(action.chunk, action.microbatch));
      pending.reset();
      ++backwards;
    }
  }
  CHECK(backwards == 8);
  for (const PlanAction& action : plan.programs[1].actions) CHECK(action.kind != ActionKind::recompute_stage);
}

TEST_CASE("plans do not cover context parallelism", "[plan]") {
  const TrainingScenario scenario = test::scenario_from(scenario_text(R"({"cp": 2})", 2));
  const test::TrainingRun run = test::run_training(scenario);
  CHECK_THROWS_WITH(build_execution_plan(scenario, run.workload, run.result),
                    Catch::Contains("execution plans do not cover context parallelism yet (parallel.cp = 2)"));
}

TEST_CASE("plans do not cover TP communication overlapped with the GEMMs", "[plan]") {
  const TrainingScenario scenario =
      test::scenario_from(scenario_text(R"({"tp": 2, "sequence_parallel": true})", 2, R"("megatron-core")"));
  const test::TrainingRun run = test::run_training(scenario);
  CHECK_THROWS_WITH(build_execution_plan(scenario, run.workload, run.result),
                    Catch::Contains("execution plans do not cover TP communication overlapped with the GEMMs yet") &&
                        Catch::Contains(R"("stack": {"base": "megatron-core", "tp_comm_overlap": false})"));
}

TEST_CASE("bad plan files name the JSON path", "[plan]") {
  auto read = [](const std::string& text) {
    const JsonDocument document = JsonDocument::parse_text(text, "plan");
    return read_execution_plan(document.root());
  };
  const std::string head = R"({"format": "weft-plan", "version": 1, "parallel": {"tp": 1, "cp": 1, "dp": 1, "pp": 1},
                              "simulated_iteration_ns": 5, "program_of_rank": [0], "programs": [{"label": "x",
                              "stage": 0, "actions": )";
  const std::string op = R"({"id": 0, "name": "a", "class": "allreduce", "dtype": "bf16", "shape": [8], "flops": 0,
                            "memory_bytes": 0, "network_bytes": 8, "stream": "dp comm", "group": "dp"})";
  CHECK_NOTHROW(read(head + R"([{"action": "collective", "ops": [)" + op + "]}]}]}"));
  CHECK_THROWS_WITH(read(head + R"([{"action": "wait_irecv", "transfer": 3}]}]})"),
                    Catch::Contains("programs[0].actions[0].transfer: no irecv launched this transfer before"));
  CHECK_THROWS_WITH(read(head + R"([{"action": "irecv", "transfer": 3, "peer_stage": 0, "tag": 3, "bytes": 8}]}]})"),
                    Catch::Contains("transfer 3 is never waited for"));
  const std::string gemm = R"({"id": 0, "name": "g", "class": "gemm", "dtype": "bf16", "shape": [2, 2, 2], "flops": 16,
                              "memory_bytes": 24, "network_bytes": 0, "stream": "compute"})";
  const std::string waits = R"({"id": 1, "name": "h", "class": "gemm", "dtype": "bf16", "shape": [2, 2, 2], "flops": 16,
                               "memory_bytes": 24, "network_bytes": 0, "stream": "compute", "after": [0]})";
  CHECK_THROWS_WITH(read(head + R"([{"action": "compute", "ops": [)" + gemm + "," + waits + "]}]}]}"),
                    Catch::Contains("ops[1].after[0]: expected the id of an earlier asynchronous op"));
  CHECK_THROWS_WITH(read(std::string(head).replace(head.find("[0]"), 3, "[0, 0]") + "[]}]}"),
                    Catch::Contains("program_of_rank: expected one program per rank of tp x cp x dp x pp = 1"));
  CHECK_THROWS_WITH(read(R"({"format": "weft-measurements"})"), Catch::Contains("format: expected \"weft-plan\""));
  const std::string meshes = R"({"format": "weft-plan", "version": 1, "simulated_iteration_ns": 5,
      "parallel": {"tp": 2, "cp": 1, "dp": 1, "pp": 2, "stages": [{"tp": 1, "dp": 2}, {"tp": 2, "dp": 1}]},
      "program_of_rank": [0, 0, 1, 1], "programs": [
        {"label": "a", "stage": 0, "actions": [{"action": "isend", "transfer": 0, "peer_stage": 1, "tag": 0,
                                               "bytes": 8}, {"action": "wait_isend", "transfer": 0}]},
        {"label": "b", "stage": 1, "actions": []}]})";
  CHECK(read(meshes).dims.positions == std::vector<PositionMesh>{{1, 2}, {2, 1}});
  CHECK_THROWS_WITH(read(std::string(meshes).replace(meshes.find(R"({"tp": 1, "dp": 2})"), 8, R"({"tp": 0)")),
                    Catch::Contains("parallel.stages[0].tp: expected an integer from 1"));
  const std::string second_mesh = R"(, {"tp": 2, "dp": 1}])";
  CHECK_THROWS_WITH(read(std::string(meshes).replace(meshes.find(second_mesh), second_mesh.size(), "]")),
                    Catch::Contains("parallel.stages: expected one mesh per stage (pp)"));
  // A relay's bytes per replica: both lists, one entry per replica of each mesh, each the slot.
  const std::string relayed = R"("bytes": 8, "relay_shares": [3, 1], "relay_parts": [4]})";
  auto relay = [&](const std::string& replacement) {
    return std::string(meshes).replace(meshes.find(R"("bytes": 8})"), 11, replacement);
  };
  CHECK(read(relay(relayed)).programs[0].actions[0].relay_shares == std::vector<std::int64_t>{3, 1});
  CHECK_THROWS_WITH(read(relay(R"("bytes": 8, "relay_shares": [3, 1]})")),
                    Catch::Contains("actions[0]: expected relay_shares and relay_parts together"));
  CHECK_THROWS_WITH(read(relay(R"("bytes": 8, "relay_shares": [4], "relay_parts": [4]})")),
                    Catch::Contains("relay_shares: expected one entry per replica of stage 0 (dp 2), got 1"));
  CHECK_THROWS_WITH(read(relay(R"("bytes": 8, "relay_shares": [3, 1], "relay_parts": [5]})")),
                    Catch::Contains("relay_parts: expected entries adding up to the slot, half the transfer's 8 "
                                    "bytes: 4, not 5"));
  const std::string same_dp =
      std::string(relay(relayed)).replace(meshes.find(R"({"tp": 1, "dp": 2})"), 18, R"({"tp": 2, "dp": 1})");
  CHECK_THROWS_WITH(read(same_dp),
                    Catch::Contains("relay_shares: expected only on a transfer between meshes of different DP"));
  CHECK_THROWS_WITH(read(std::string(head).replace(0, 1, R"({"embedding_stage": 1, )") + "[]}]}"),
                    Catch::Contains("embedding_stage: expected an integer from 0 to 0, got 1"));
}

}  // namespace
}  // namespace weft
