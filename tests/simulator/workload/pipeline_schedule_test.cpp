#include "simulator/workload/pipeline_schedule.hpp"

#include <algorithm>

#include <fmt/format.h>
#include <catch2/catch.hpp>

#include "tests/simulator/workload/training_test_support.hpp"

namespace weft {
namespace {

using test::run_training;
using test::scenario_from;

int count(const std::vector<PipelineAction>& actions, PassKind kind) {
  return static_cast<int>(std::count_if(actions.begin(), actions.end(), [&](auto& a) { return a.kind == kind; }));
}

TEST_CASE("1F1B warms up with p - s - 1 forwards, then alternates", "[schedule]") {
  const auto actions = pipeline_actions(PipelineSchedule::one_f_one_b, 1, 4, 1, 6);
  const std::vector<PipelineAction> expected = {
      {PassKind::forward, 0, 0}, {PassKind::forward, 1, 0},  {PassKind::forward, 2, 0},  {PassKind::backward, 0, 0},
      {PassKind::forward, 3, 0}, {PassKind::backward, 1, 0}, {PassKind::forward, 4, 0},  {PassKind::backward, 2, 0},
      {PassKind::forward, 5, 0}, {PassKind::backward, 3, 0}, {PassKind::backward, 4, 0}, {PassKind::backward, 5, 0}};
  CHECK(actions == expected);
}

TEST_CASE("encoder-first runs every chunk-0 forward, 1F1B over chunk 1, then every chunk-0 backward", "[schedule]") {
  const auto actions = pipeline_actions(PipelineSchedule::encoder_first, 0, 2, 2, 3);
  const std::vector<PipelineAction> expected = {
      {PassKind::forward, 0, 0},  {PassKind::forward, 1, 0},  {PassKind::forward, 2, 0},  {PassKind::forward, 0, 1},
      {PassKind::forward, 1, 1},  {PassKind::backward, 0, 1}, {PassKind::forward, 2, 1},  {PassKind::backward, 1, 1},
      {PassKind::backward, 2, 1}, {PassKind::backward, 0, 0}, {PassKind::backward, 1, 0}, {PassKind::backward, 2, 0}};
  CHECK(actions == expected);
}

TEST_CASE("every schedule runs each pass of each microbatch exactly once", "[schedule]") {
  for (PipelineSchedule schedule :
       {PipelineSchedule::gpipe, PipelineSchedule::one_f_one_b, PipelineSchedule::interleaved, PipelineSchedule::zb_h1,
        PipelineSchedule::encoder_first}) {
    const int chunks = schedule == PipelineSchedule::interleaved     ? 3
                       : schedule == PipelineSchedule::encoder_first ? 2
                                                                     : 1;
    for (int stage = 0; stage < 4; ++stage) {
      const auto actions = pipeline_actions(schedule, stage, 4, chunks, 8);
      INFO(kPipelineScheduleNames.name(schedule) << " stage " << stage);
      CHECK(count(actions, PassKind::forward) == 8 * chunks);
      CHECK(count(actions, PassKind::backward) == 8 * chunks);
      CHECK(count(actions, PassKind::weight) == (schedule == PipelineSchedule::zb_h1 ? 8 : 0));
      // A backward never precedes its forward; a weight pass never precedes its backward.
      for (std::size_t i = 0; i < actions.size(); ++i) {
        if (actions[i].kind == PassKind::forward) continue;
        const PassKind before = actions[i].kind == PassKind::backward ? PassKind::forward : PassKind::backward;
        const auto earlier = std::find(actions.begin(), actions.begin() + static_cast<std::ptrdiff_t>(i),
                                       PipelineAction{before, actions[i].microbatch, actions[i].chunk});
        CHECK(earlier != actions.begin() + static_cast<std::ptrdiff_t>(i));
      }
    }
  }
}

TEST_CASE("ZB-H1 keeps at most p microbatches in flight on every stage", "[schedule]") {
  const int stages = 4;
  for (int stage = 0; stage < stages; ++stage) {
    int in_flight = 0;
    int peak = 0;
    for (const PipelineAction& action : pipeline_actions(PipelineSchedule::zb_h1, stage, stages, 1, 12)) {
      if (action.kind == PassKind::forward) peak = std::max(peak, ++in_flight);
      if (action.kind == PassKind::weight) --in_flight;
    }
    CHECK(peak <= stages);
  }
}

// Equal stages, no communication cost: a small decoder with a tiny vocabulary, so the first and
// last stages' embedding and head are negligible next to the layers.
TrainingScenario uniform_pipeline(int pp, int microbatches, const std::string& schedule, int vpp = 1) {
  return scenario_from(fmt::format(R"({{
      "model": {{"name": "uniform", "layers": 24, "hidden": 2048, "ffn_hidden": 8192, "heads": 16, "vocab": 64}},
      "cluster": {{"base": "dgx-h100", "gpus": {}}},
      "parallel": {{"tp": 1, "pp": {}, "dp": 1, "vpp": {}, "schedule": "{}"}},
      "training": {{"global_batch": {}, "seq_len": 2048}},
      "options": {{"ideal_network": true}}}})",
                                   pp, pp, vpp, schedule, microbatches));
}

// Idle share of the pipeline phase on its busiest stage. The optimizer step that closes the
// iteration is not part of the pipeline, so its time comes off both the stage and the iteration.
double bubble_fraction(const TrainingScenario& scenario) {
  const auto run = run_training(scenario);
  const Graph& graph = run.workload.graph;
  std::vector<double> optimizer_s(graph.device_count(), 0.0);
  TimeNs pipeline_end = 0;
  for (std::size_t i = 0; i < graph.op_count(); ++i) {
    const OpId op(static_cast<OpId::value_type>(i));
    if (graph.op_work(op).op_class == OpClass::optimizer) {
      optimizer_s[graph.op_device(op).value()] += static_cast<double>(run.result.duration(op)) / 1e9;
    } else {
      pipeline_end = std::max(pipeline_end, run.result.end(op));
    }
  }
  double busiest = 0.0;
  for (const SimulatedRank& rank : run.workload.ranks) {
    const StageReport& stage = run.report.stages[static_cast<std::size_t>(rank.coordinates.pp)];
    busiest = std::max(busiest, stage.compute_s - optimizer_s[rank.device.value()]);
  }
  return 1.0 - busiest / (static_cast<double>(pipeline_end) / 1e9);
}

TEST_CASE("1F1B's bubble is (p-1)/(m+p-1) for equal stages", "[schedule][simulation]") {
  for (auto [pp, m] : {std::pair{2, 8}, {4, 8}, {4, 16}, {8, 16}}) {
    INFO("pp " << pp << ", " << m << " microbatches");
    const double expected = (pp - 1.0) / (m + pp - 1.0);
    CHECK(bubble_fraction(uniform_pipeline(pp, m, "1f1b")) == Approx(expected).epsilon(0.01));
    CHECK(bubble_fraction(uniform_pipeline(pp, m, "gpipe")) == Approx(expected).epsilon(0.01));
  }
}

TEST_CASE("interleaved 1F1B's bubble is (p-1)/(v m + p - 1)", "[schedule][simulation]") {
  for (auto [pp, m, v] : {std::tuple{2, 8, 2}, {4, 8, 2}, {4, 8, 3}, {4, 16, 2}}) {
    INFO("pp " << pp << ", " << m << " microbatches, vpp " << v);
    const double expected = (pp - 1.0) / (v * m + pp - 1.0);
    CHECK(bubble_fraction(uniform_pipeline(pp, m, "interleaved", v)) == Approx(expected).epsilon(0.01));
  }
}

TEST_CASE("ZB-H1's bubble is smaller than 1F1B's on the same plan", "[schedule][simulation]") {
  for (auto [pp, m] : {std::pair{4, 8}, {8, 16}}) {
    INFO("pp " << pp << ", " << m << " microbatches");
    const double one_f_one_b = run_training(uniform_pipeline(pp, m, "1f1b")).report.iteration_time_s;
    const double zero_bubble = run_training(uniform_pipeline(pp, m, "zb-h1")).report.iteration_time_s;
    CHECK(zero_bubble < one_f_one_b);
  }
}

}  // namespace
}  // namespace weft
