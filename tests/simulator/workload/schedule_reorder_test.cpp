#include "simulator/workload/schedule_reorder.hpp"

#include <fmt/format.h>
#include <catch2/catch.hpp>

#include "simulator/engine/simulation_checkpoint.hpp"
#include "tests/simulator/workload/training_test_support.hpp"

namespace weft {
namespace {

using Catch::Matchers::Contains;

TrainingScenario pipeline(const std::string& schedule, const std::string& recompute) {
  return test::scenario_from(fmt::format(
      R"({{"model": {{"base": "llama3-8b", "layers": 8, "hidden": 1024, "ffn_hidden": 3584, "heads": 8, "kv_heads": 4}},
          "cluster": {{"base": "dgx-h100", "gpus": 8}},
          "parallel": {{"tp": 2, "pp": 4, "dp": 1, "schedule": "{}", "recompute": "{}"}},
          "training": {{"global_batch": 8, "seq_len": 2048}}}})",
      schedule, recompute));
}

TEST_CASE("a 1F1B workload resumed in GPipe order is the GPipe workload's simulation", "[workload][checkpoint]") {
  for (const char* recompute : {"none", "full"}) {
    INFO("recompute " << recompute);
    const TrainingWorkload one_f_one_b = build_training_workload(pipeline("1f1b", recompute), {.name_ops = false});
    const SimulationCheckpoint checkpoint(one_f_one_b.graph, *one_f_one_b.cost_model);
    const auto resumed = checkpoint.resume(schedule_order(one_f_one_b, PipelineSchedule::gpipe, 1));
    // Built directly as GPipe, every op simulated.
    const auto gpipe = test::run_training(pipeline("gpipe", recompute), {.composites = false}, false);
    CHECK(resumed.result.makespan == gpipe.result.makespan);
    // GPipe keeps every microbatch's activations on the first stage, 1F1B as many as stages.
    const DeviceId first = one_f_one_b.ranks.front().device;
    CHECK(resumed.result.devices[first.value()].peak_memory > checkpoint.result().devices[first.value()].peak_memory);
    for (std::size_t stage = 0; stage < one_f_one_b.ranks.size(); ++stage) {
      const DeviceId device = one_f_one_b.ranks[stage].device;
      CHECK(resumed.result.devices[device.value()].peak_memory ==
            gpipe.result.devices[gpipe.workload.ranks[stage].device.value()].peak_memory);
    }
    // Resumed in its own order, it is itself.
    const auto same = checkpoint.resume(schedule_order(one_f_one_b, PipelineSchedule::one_f_one_b, 1));
    CHECK(same.result.makespan == checkpoint.result().makespan);
  }
}

TEST_CASE("a schedule must run exactly the workload's passes", "[workload][checkpoint][errors]") {
  const TrainingWorkload workload = build_training_workload(pipeline("1f1b", "none"), {.name_ops = false});
  CHECK_THROWS_WITH(schedule_order(workload, PipelineSchedule::zb_h1, 1),
                    Contains("zb-h1 runs passes the workload does not have"));
  CHECK_THROWS_WITH(schedule_order(workload, PipelineSchedule::interleaved, 2),
                    Contains("interleaved runs passes the workload does not have"));
  const TrainingWorkload split = build_training_workload(pipeline("zb-h1", "none"), {.name_ops = false});
  CHECK_THROWS_WITH(schedule_order(split, PipelineSchedule::gpipe, 1),
                    Contains("gpipe does not run every pass of the workload"));
  const TrainingWorkload flat = build_training_workload(pipeline("1f1b", "none"), {.composites = false});
  CHECK_THROWS_WITH(schedule_order(flat, PipelineSchedule::gpipe, 1), Contains("no passes to reorder"));
}

}  // namespace
}  // namespace weft
