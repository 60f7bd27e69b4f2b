#include "simulator/planner/dip/dip_execution_plan.hpp"

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "simulator/planner/dip/rank_actions.hpp"

namespace weft::dip {
namespace {

class ProgramWriter {
 public:
  ProgramWriter(const DipPlan& plan, LayerCosts& costs) : plan_(plan), costs_(costs) {}

  void add_stage(std::size_t stage, PlanAction& action) {
    const StageWork& work = plan_.flows.work[stage];
    const PipelineStage& s = plan_.flows.stages[stage];
    action.kind = s.backward ? ActionKind::backward_stage : ActionKind::forward_stage;
    action.chunk = work.chunk;
    action.microbatch = work.microbatch;
    const std::string suffix = " mb" + std::to_string(work.microbatch) + "." + std::to_string(work.sub_microbatch);
    if (!s.backward) {
      for (int layer = work.first_layer; layer < work.end_layer; ++layer) {
        for (const Step& step : layer_steps(layer, work)) add_op(action, step.forward, step, " fwd" + suffix);
      }
      return;
    }
    for (int layer = work.end_layer; layer-- > work.first_layer;) {
      const std::vector<Step> steps = layer_steps(layer, work);
      const LayerPolicy policy = plan_.policy[stage][static_cast<std::size_t>(layer - work.first_layer)];
      const bool has_backward = std::any_of(steps.begin(), steps.end(), [](const Step& step) {
        return step.backward.has_value() || step.weight_grad.has_value();
      });
      for (const Step& step : steps) {
        const bool recompute =
            has_backward && (policy == LayerPolicy::full ||
                             (policy == LayerPolicy::selective && step.attention_core && step.recomputable_bytes > 0));
        if (recompute) add_op(action, step.forward, step, " recompute" + suffix);
      }
      for (std::size_t k = steps.size(); k-- > 0;) {
        const Step& step = steps[k];
        if (is_collective(step.backward) && launched_) {
          launched_ = false;  // already on its way (below)
          continue;
        }
        add_op(action, step.backward, step, " bwd" + suffix);
        // The input gradient's TP collective of the step before goes right after this step's
        // input gradient, asynchronously, to overlap its regather and weight gradient as the
        // stage model (and Megatron) overlaps them; the next op waits for it.
        const bool overlap = k > 0 && is_collective(steps[k - 1].backward) && step.weight_grad;
        if (overlap) {
          add_op(action, steps[k - 1].backward, steps[k - 1], " bwd" + suffix, Issue::async);
          launched_ = true;
        }
        const Issue beside = overlap ? Issue::alongside : Issue::in_order;
        add_op(action, step.regather, step, " regather" + suffix, beside);
        add_op(action, step.weight_grad, step, " wgrad" + suffix, beside);
      }
    }
    // Nothing after it in the stage waits for it (no op of an earlier step follows it: a
    // projector's entry collective with only frozen layers before it in the stage, say): it runs
    // synchronously so that the stage's send carries its result. The stage model, which overlaps
    // it with the weight gradient, is then short by that overlap.
    if (!in_flight_.empty()) {
      for (PlanOp& op : action.ops) {
        if (op.id != in_flight_.front()) continue;
        op.async = false;
        op.stream = "compute";
      }
      in_flight_.clear();
    }
  }

  void add_transfer(const RankAction& ranked, PlanAction& action) {
    action.kind = ranked.kind;
    action.transfer = ranked.transfer;
    action.peer_stage = ranked.peer;
    action.tag = ranked.transfer;
    action.name = "transfer " + std::to_string(ranked.transfer);
    // A forward transfer carries the consumer's input; a backward one the gradient of the input
    // of the stage that sends it.
    const bool backward = plan_.flows.stages[ranked.producer].backward;
    const StageWork& work = plan_.flows.work[backward ? ranked.producer : ranked.consumer];
    action.bytes = std::max<Bytes>(1, costs_.in_stage(work.first_layer, work.shape).input);
  }

 private:
  std::vector<Step> layer_steps(int layer, const StageWork& work) const {
    return costs_.steps(layer, costs_.layer_shape(layer, work.shape));
  }

  static bool is_collective(const std::optional<OpWork>& work) {
    return work && category_of(work->op_class) == OpCategory::communication;
  }

  // How an op is issued: in order (after the collective in flight, if any), alongside the
  // collective in flight, or as that collective, asynchronously on the "tp comm" stream.
  enum class Issue : std::uint8_t { in_order, alongside, async };

  void add_op(PlanAction& action, const std::optional<OpWork>& work, const Step& step, const std::string& what,
              Issue issue = Issue::in_order) {
    if (!work) return;
    PlanOp op;
    op.id = next_id_++;
    op.name = step.name + what;
    op.work = *work;
    op.work.comm_group = 0;
    if (category_of(work->op_class) == OpCategory::communication) op.group = "tp";
    if (issue == Issue::async) {
      op.async = true;
      op.stream = "tp comm";
      in_flight_.push_back(op.id);
    } else if (issue == Issue::in_order) {
      op.after = std::exchange(in_flight_, {});
    }
    action.ops.push_back(std::move(op));
  }

  const DipPlan& plan_;
  LayerCosts& costs_;
  std::uint32_t next_id_ = 0;
  std::vector<std::uint32_t> in_flight_;  // an asynchronous collective the next op in order waits for
  bool launched_ = false;                 // the next collective step's op is in flight already
};

}  // namespace

ExecutionPlan dip_execution_plan(const TrainingScenario& scenario, const DipPlan& plan) {
  const ParallelPlan& p = scenario.parallel;
  const MultimodalModel model(scenario.model, p.cp_algorithm);
  LayerCosts costs(model, scenario.shard_context(), scenario.cluster, scenario.options.ideal_network,
                   scenario.parallel.dp);
  ExecutionPlan out;
  out.description = scenario.description;
  out.dims = p.dims();
  out.simulated_iteration_ns = plan.schedule.makespan;
  const std::vector<std::vector<RankAction>> ranks = rank_actions(plan.flows.stages, plan.schedule);
  for (std::size_t rank = 0; rank < ranks.size(); ++rank) {
    PlanProgram program;
    program.label = "pipeline rank " + std::to_string(rank);
    program.stage = static_cast<int>(rank);
    ProgramWriter writer(plan, costs);
    for (const RankAction& ranked : ranks[rank]) {
      PlanAction& action = program.actions.emplace_back();
      if (ranked.is_stage()) {
        writer.add_stage(ranked.stage, action);
      } else {
        writer.add_transfer(ranked, action);
      }
    }
    out.programs.push_back(std::move(program));
  }
  for (std::int64_t rank = 0; rank < out.dims.world_size(); ++rank)
    out.program_of_rank.push_back(out.dims.coordinates_of(rank).pp);
  return out;
}

}  // namespace weft::dip
