// The execution plan of a DIP schedule: what weft live runs must be a valid plan whose programs
// hold each rank's stages, their ops and matching transfers.
#include "simulator/planner/dip/dip_execution_plan.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <map>

#include "tests/simulator/planner/dip/dip_test_support.hpp"

namespace weft::dip {
namespace {

DipPlan quick_plan(const TrainingScenario& scenario) {
  DipOptions options;
  options.max_iterations = 8;
  return plan_dip(scenario, options);
}

TEST_CASE("a DIP execution plan reads back and holds every stage with its ops", "[dip][execution-plan]") {
  const TrainingScenario scenario =
      test::load_scenario_text(test::small_vlm_scenario(test::kImageTextData, R"(, "recompute": "full")"));
  const DipPlan plan = quick_plan(scenario);
  const ExecutionPlan execution = dip_execution_plan(scenario, plan);
  // What read_execution_plan checks (op ids in order, waits naming launched transfers, fields).
  const nlohmann::json json = execution_plan_json(execution);
  const JsonDocument document = JsonDocument::parse_text(json.dump(), "plan.json");
  const ExecutionPlan read = read_execution_plan(document.root());
  CHECK(read.world_size() == 4);
  CHECK(read.program_of_rank == std::vector<int>{0, 0, 1, 1});  // TP peers share their stage's program
  CHECK(read.simulated_iteration_ns == plan.schedule.makespan);

  std::map<std::int64_t, std::pair<int, std::int64_t>> sends;  // tag: (peer stage, bytes)
  std::map<std::int64_t, std::pair<int, std::int64_t>> receives;
  std::size_t stages = 0;
  for (const PlanProgram& program : execution.programs) {
    std::size_t ops_in_order = 0;
    for (const PlanAction& action : program.actions) {
      for (const PlanOp& op : action.ops) CHECK(op.id == ops_in_order++);
      if (action.kind == ActionKind::isend) sends[action.tag] = {program.stage, action.bytes};
      if (action.kind == ActionKind::irecv) receives[action.tag] = {action.peer_stage, action.bytes};
      if (action.kind != ActionKind::forward_stage && action.kind != ActionKind::backward_stage) continue;
      ++stages;
      REQUIRE_FALSE(action.ops.empty());
      std::size_t forward = 0;
      std::size_t recomputed = 0;
      for (const PlanOp& op : action.ops) {
        if (category_of(op.work.op_class) == OpCategory::communication) CHECK(op.group == "tp");
        forward += op.name.find(" fwd ") != std::string::npos ? 1 : 0;
        recomputed += op.name.find(" recompute ") != std::string::npos ? 1 : 0;
      }
      if (action.kind == ActionKind::forward_stage) {
        CHECK(forward == action.ops.size());
      } else {
        // Forward ops come back only as recomputation, and a backward stage computes gradients.
        CHECK(forward == 0);
        CHECK(recomputed < action.ops.size());
      }
    }
  }
  CHECK(stages == plan.flows.stages.size());
  // Every send has its receive on the peer, with the same bytes.
  REQUIRE(sends.size() == receives.size());
  for (const auto& [tag, send] : sends) {
    REQUIRE(receives.count(tag) == 1);
    CHECK(receives.at(tag).second == send.second);
    CHECK(send.second > 1);
  }
}

TEST_CASE("a backward TP collective overlaps the weight gradient before it, as the stage model times it",
          "[dip][execution-plan]") {
  const TrainingScenario scenario = test::load_scenario_text(test::small_vlm_scenario(test::kImageTextData));
  const ExecutionPlan execution = dip_execution_plan(scenario, quick_plan(scenario));
  std::size_t overlapped = 0;
  for (const PlanProgram& program : execution.programs) {
    for (const PlanAction& action : program.actions) {
      if (action.kind != ActionKind::backward_stage) continue;
      for (std::size_t i = 0; i < action.ops.size(); ++i) {
        const PlanOp& op = action.ops[i];
        if (!op.async) continue;
        ++overlapped;
        // Launched on its own stream right after an input gradient; the weight gradient (and any
        // regather) of that step runs alongside; the next op after them waits for it.
        CHECK(op.stream == "tp comm");
        CHECK(op.group == "tp");
        REQUIRE(i > 0);
        CHECK(action.ops[i - 1].name.find(" bwd ") != std::string::npos);
        std::size_t next = i + 1;
        while (next < action.ops.size() && (action.ops[next].name.find(" wgrad ") != std::string::npos ||
                                            action.ops[next].name.find(" regather ") != std::string::npos)) {
          CHECK(action.ops[next].after.empty());
          ++next;
        }
        CHECK(next > i + 1);  // a weight gradient to overlap
        REQUIRE(next < action.ops.size());
        CHECK(action.ops[next].after == std::vector<std::uint32_t>{op.id});
      }
    }
  }
  CHECK(overlapped > 0);
}

TEST_CASE("full recompute puts a layer's forward ops back before its gradients", "[dip][execution-plan]") {
  const TrainingScenario scenario =
      test::load_scenario_text(test::small_vlm_scenario(test::kImageTextData, R"(, "recompute": "full")"));
  DipPlan plan = quick_plan(scenario);
  for (auto& layers : plan.policy) std::fill(layers.begin(), layers.end(), LayerPolicy::full);
  const ExecutionPlan execution = dip_execution_plan(scenario, plan);
  // Each backward stage reruns exactly the forward ops of one forward stage of its rank (its own:
  // the op names carry the layer, microbatch and sub-microbatch).
  for (const PlanProgram& program : execution.programs) {
    std::vector<std::vector<std::string>> forwards;
    for (const PlanAction& action : program.actions) {
      if (action.kind != ActionKind::forward_stage) continue;
      std::vector<std::string>& names = forwards.emplace_back();
      for (const PlanOp& op : action.ops) names.push_back(op.name);
    }
    for (const PlanAction& action : program.actions) {
      if (action.kind != ActionKind::backward_stage) continue;
      std::vector<std::string> recomputed;
      for (const PlanOp& op : action.ops) {
        const auto at = op.name.find(" recompute ");
        if (at != std::string::npos) recomputed.push_back(op.name.substr(0, at) + " fwd " + op.name.substr(at + 11));
      }
      std::sort(recomputed.begin(), recomputed.end());
      bool matched = false;
      for (std::vector<std::string> names : forwards) {
        std::sort(names.begin(), names.end());
        matched = matched || names == recomputed;
      }
      CHECK(matched);
    }
  }
}

}  // namespace
}  // namespace weft::dip
