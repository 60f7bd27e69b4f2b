// The planner end to end on a small VLM: its stage model against the full simulator, the memory
// limit, determinism, layer tuning, and what it refuses.
#include "simulator/planner/dip/dip_planner.hpp"

#include <catch2/catch.hpp>

#include <algorithm>

#include "simulator/core/input_error.hpp"
#include "simulator/planner/dip/dip_plan_simulation.hpp"
#include "tests/simulator/planner/dip/dip_test_support.hpp"

namespace weft::dip {
namespace {

using Catch::Matchers::Contains;

DipOptions quick(int threads = 1) {
  DipOptions options;
  options.max_iterations = 24;
  options.threads = threads;
  return options;
}

TEST_CASE("the stage model times the scenario's own plan within 3% of the full simulator", "[dip][planner]") {
  // 64 microbatches, so that what the stage model leaves out (pipeline transfers, the embedding
  // sync and the optimizer step) is small next to the pipeline.
  // With sequence parallelism the scenario's stack (Megatron-Core) overlaps the forward pass's TP
  // communication with its GEMMs, and so does the stage model (uniform data: 6 images of 169
  // tokens, which split over TP 2).
  const std::pair<std::string, const char*> cases[] = {
      {test::kImageTextData, R"(, "schedule": "1f1b")"},
      {test::kImageTextData, R"(, "schedule": "interleaved", "vpp": 2)"},
      {test::kImageTextData, R"(, "modality_stages": {"vision": 1, "language": 1})"},
      {"", R"(, "schedule": "1f1b", "sequence_parallel": true)"},
      {"", R"(, "schedule": "interleaved", "vpp": 2, "sequence_parallel": true)"}};
  for (const auto& [data, parallel] : cases) {
    INFO(data << parallel);
    const TrainingScenario scenario = test::load_scenario_text(test::small_vlm_scenario(data, parallel, false, 64));
    const DipPlan plan = plan_dip(scenario, quick());
    const double stage_model = static_cast<double>(plan.steps.front().iteration);
    CHECK(stage_model == Approx(static_cast<double>(plan.megatron_simulated)).epsilon(0.03));
  }
  // Under full recompute the simulator runs a layer's recompute as a pass of its own, which can
  // fill a rank's wait for the gradient; the stage model runs it inside the backward stage, so it
  // is slower, never faster.
  const TrainingScenario scenario =
      test::load_scenario_text(test::small_vlm_scenario(test::kImageTextData, R"(, "recompute": "full")", false, 64));
  const DipPlan plan = plan_dip(scenario, quick());
  CHECK(plan.steps.front().iteration > plan.megatron_simulated);
}

TEST_CASE("with per-sample data every DP replica is planned, and the slowest is the plan", "[dip][planner]") {
  const TrainingScenario scenario =
      test::load_scenario_text(test::with_two_replicas(test::small_vlm_scenario(test::kImageTextData, "", false, 32)));
  REQUIRE(scenario.parallel.dp == 2);
  const DipPlan plan = plan_dip(scenario, quick());
  REQUIRE(plan.replicas.size() == 2);
  CHECK(plan.replicas[0].replica == 0);
  CHECK(plan.replicas[1].replica == 1);
  const auto slowest = std::max_element(plan.replicas.begin(), plan.replicas.end(),
                                        [](const auto& a, const auto& b) { return a.planned < b.planned; });
  CHECK(plan.replica == slowest->replica);
  CHECK(plan.schedule.makespan == slowest->planned);
  CHECK(plan.steps.front().iteration == slowest->baseline);
  // The plan holds that replica's own microbatches, which differ from the other's.
  const MicrobatchShapes drawn = *scenario.microbatch_shapes();
  REQUIRE(plan.shapes.size() == 16);
  for (int mb = 0; mb < 16; ++mb) CHECK(plan.shapes[static_cast<std::size_t>(mb)] == drawn.at(plan.replica, mb));
  CHECK(plan.replicas[0].baseline != plan.replicas[1].baseline);
  // Uniform data: the replicas are alike, and one is planned.
  CHECK(
      plan_dip(test::load_scenario_text(test::with_two_replicas(test::small_vlm_scenario("", "", false, 32))), quick())
          .replicas.size() == 1);
}

TEST_CASE("every schedule the planner makes respects the dependencies and the memory limit", "[dip][planner]") {
  const TrainingScenario scenario = test::load_scenario_text(test::small_vlm_scenario(test::kImageTextData));
  const DipPlan free = plan_dip(scenario, quick());
  REQUIRE(free.steps.size() == 4);
  // A limit that leaves half the activations the unlimited schedule held.
  DipOptions options = quick();
  options.memory_limit = free.static_memory + free.steps[1].peak_activations / 2;
  const DipPlan tight = plan_dip(scenario, options);
  CHECK(tight.activation_limit == free.steps[1].peak_activations / 2);
  for (const ScheduleOutcome& step : std::vector<ScheduleOutcome>(tight.steps.begin() + 1, tight.steps.end())) {
    INFO(step.name);
    CHECK(step.peak_activations <= tight.activation_limit);
  }
  const StageSchedule& schedule = tight.schedule;
  for (std::size_t i = 0; i < tight.flows.stages.size(); ++i) {
    CHECK(schedule.end[i] - schedule.start[i] == tight.flows.stages[i].duration);
    for (std::size_t p : tight.flows.stages[i].predecessors) CHECK(schedule.end[p] <= schedule.start[i]);
  }
  // Each rank runs one stage at a time, in its order.
  for (const auto& order : schedule.order) {
    for (std::size_t k = 1; k < order.size(); ++k) CHECK(schedule.end[order[k - 1]] <= schedule.start[order[k]]);
  }
  // The ablation's last row is the plan's schedule.
  CHECK(tight.steps.back().iteration == schedule.makespan);
}

TEST_CASE("the plan is never slower than a baseline that fits: interleaved 1F1B is one", "[dip][planner]") {
  // The small VLM's 1F1B plan: DIP beats it, but Megatron's interleaved 1F1B (2 chunks a rank,
  // balanced by parameters) beats DIP, and the plan returned is that baseline's.
  const TrainingScenario one_chunk = test::load_scenario_text(test::small_vlm_scenario(test::kImageTextData));
  const DipPlan plan = plan_dip(one_chunk, quick());
  REQUIRE(plan.other_baselines.size() == 1);
  const ScheduleOutcome& interleaved = plan.other_baselines.front();
  // The same baseline as a scenario that asks for it, derived by the scenario loader.
  const TrainingScenario two_chunks = test::load_scenario_text(
      test::small_vlm_scenario(test::kImageTextData, R"(, "schedule": "interleaved", "vpp": 2)"));
  const DipPlan asked = plan_dip(two_chunks, quick());
  CHECK(interleaved.iteration == asked.steps.front().iteration);
  CHECK(asked.other_baselines.empty());  // it is the scenario's own plan there
  // DIP's own schedule (the ablation's last row) loses to it; the plan is the baseline's.
  REQUIRE(plan.steps.back().iteration > interleaved.iteration);
  CHECK(plan.returned_baseline == interleaved.name);
  CHECK(plan.schedule.makespan == interleaved.iteration);
  CHECK(asked.returned_baseline == asked.steps.front().name);
  CHECK(asked.schedule.makespan == asked.steps.front().iteration);
  // Its flows are Megatron's: whole microbatches through 4 virtual stages, forward and backward.
  CHECK(plan.flows.stages.size() == plan.shapes.size() * 2 * 4);
  for (std::size_t i = 0; i < plan.flows.stages.size(); ++i)
    CHECK(plan.policy[i].size() ==
          static_cast<std::size_t>(plan.flows.work[i].end_layer - plan.flows.work[i].first_layer));
  CHECK(interleaved.most_memory <= plan.static_memory + plan.activation_limit);
  // The full simulator runs it as weft live would, as close to the stage model as DIP's plans.
  REQUIRE(plan.simulation);
  CHECK(static_cast<double>(plan.simulation->result.makespan) ==
        Approx(static_cast<double>(plan.schedule.makespan)).epsilon(0.03));

  // Under a memory limit the baseline does not fit, DIP's schedule stays.
  DipOptions tight = quick();
  tight.memory_limit = interleaved.most_memory - 1;
  const DipPlan limited = plan_dip(one_chunk, tight);
  REQUIRE(limited.other_baselines.front().most_memory == interleaved.most_memory);
  CHECK(limited.returned_baseline.empty());
  CHECK(limited.schedule.makespan == limited.steps.back().iteration);
  // With --slowest no baseline replaces the ranking it looks for.
  DipOptions slowest = quick();
  slowest.slowest = true;
  CHECK(plan_dip(one_chunk, slowest).returned_baseline.empty());
  // Under modality parallelism there is no interleaved variant, and DIP beats the scenario's 1F1B.
  const DipPlan modality = plan_dip(test::load_scenario_text(test::small_vlm_scenario(
                                        test::kImageTextData, R"(, "modality_stages": {"vision": 1, "language": 1})")),
                                    quick());
  CHECK(modality.other_baselines.empty());
  CHECK(modality.returned_baseline.empty());
  CHECK(modality.schedule.makespan == modality.steps.back().iteration);
  CHECK(modality.schedule.makespan < modality.steps.front().iteration);
}

TEST_CASE("a plan is the same for a seed with 1 and 2 threads", "[dip][planner]") {
  const TrainingScenario scenario = test::load_scenario_text(test::small_vlm_scenario(test::kImageTextData));
  const DipPlan one = plan_dip(scenario, quick(1));
  const DipPlan two = plan_dip(scenario, quick(2));
  CHECK(one.group_priorities == two.group_priorities);
  CHECK(one.schedule.order == two.schedule.order);
  CHECK(one.schedule.makespan == two.schedule.makespan);
  CHECK(one.search.evaluations == two.search.evaluations);
  CHECK(one.search.evaluations > 0);
}

TEST_CASE("layer tuning trades full recompute for speed where memory allows", "[dip][planner]") {
  const TrainingScenario scenario =
      test::load_scenario_text(test::small_vlm_scenario(test::kImageTextData, R"(, "recompute": "full")"));
  const DipPlan plan = plan_dip(scenario, quick());
  const ScheduleOutcome& ranked = plan.steps[2];
  const ScheduleOutcome& tuned = plan.steps[3];
  // Everything recomputed is one candidate of every stage pair, so tuning never adds work.
  CHECK(tuned.busy_share * static_cast<double>(tuned.iteration) <=
        ranked.busy_share * static_cast<double>(ranked.iteration) * (1 + 1e-12));
  CHECK(tuned.peak_activations <= plan.activation_limit);
  // With 80 GiB there is room to keep layers: some stage keeps more than its input.
  const bool keeps = std::any_of(plan.policy.begin(), plan.policy.end(), [](const std::vector<LayerPolicy>& layers) {
    return std::find(layers.begin(), layers.end(), LayerPolicy::keep) != layers.end();
  });
  CHECK(keeps);
  CHECK(tuned.iteration < ranked.iteration);
}

TEST_CASE("what the planner cannot plan is refused with the reason", "[dip][planner][errors]") {
  const auto refuses = [](const std::string& text, const DipOptions& options, const std::string& message) {
    const TrainingScenario scenario = test::load_scenario_text(text);
    CHECK_THROWS_WITH(plan_dip(scenario, options), Contains(message));
  };
  refuses(test::small_vlm_scenario(test::kImageTextData, R"(, "schedule": "zb-h1")"), quick(),
          "parallel.schedule: zb-h1 splits weight passes");
  // Multimodal scenarios refuse context parallelism when loaded; a language model may have it.
  const std::string context_parallel = R"({"model": {"base": "llama3-8b", "layers": 4},
      "cluster": {"base": "h800-testbed", "gpus": 8}, "parallel": {"tp": 2, "cp": 2, "pp": 2},
      "training": {"global_batch": 8, "seq_len": 4096}})";
  refuses(context_parallel, quick(), "parallel.cp: the planner splits sequences whole; expected 1");
  // The stage model prices one recompute policy for all layers: full recompute of some is refused.
  const std::string some_layers = R"({"model": {"base": "llama3-8b", "layers": 4},
      "cluster": {"base": "h800-testbed", "gpus": 8}, "parallel": {"tp": 2, "pp": 2, "recompute": "full",
      "recompute_layers": {"first": 1}}, "training": {"global_batch": 8, "seq_len": 4096}})";
  refuses(some_layers, quick(), "parallel.recompute_layers: the stage model prices one recompute policy");
  // Its gradients are reduced over all of data parallelism: hybrid sharding is refused.
  const std::string hybrid = R"({"model": {"base": "llama3-8b", "layers": 4},
      "cluster": {"base": "h800-testbed", "gpus": 8}, "parallel": {"tp": 2, "dp": 4, "zero": 1, "dp_shard": 2},
      "training": {"global_batch": 8, "seq_len": 4096}})";
  refuses(hybrid, quick(), "parallel.dp_shard: the stage model reduces gradients over all of data parallelism");
  DipOptions small = quick();
  small.memory_limit = Bytes{4} << 30;
  refuses(test::small_vlm_scenario(test::kImageTextData), small, "leaves nothing for activations");
  const TrainingScenario scenario = test::load_scenario_text(test::small_vlm_scenario(test::kImageTextData));
  DipOptions barely = quick();
  barely.memory_limit = plan_dip(scenario, quick()).static_memory + 1024;
  refuses(test::small_vlm_scenario(test::kImageTextData), barely, "is too small for this batch");
}

}  // namespace
}  // namespace weft::dip
