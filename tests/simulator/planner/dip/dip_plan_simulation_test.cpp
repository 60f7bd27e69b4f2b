// A DIP plan as weft live runs it, timed by the full simulator, against the stage model it was
// planned on.
#include "simulator/planner/dip/dip_plan_simulation.hpp"

#include <catch2/catch.hpp>

#include "tests/simulator/planner/dip/dip_test_support.hpp"

namespace weft::dip {
namespace {

TEST_CASE("with a free network the full simulator runs the plan exactly as the stage model times it",
          "[dip][plan-simulation]") {
  // The stage model leaves out transfers, the host that issues kernels and the device's gap between
  // them, and times a backward TP collective as overlapping the weight gradient before it; with
  // communication free and neither host nor gap, the executed plan has nothing else, so two different timings of it
  // (the stage model's recurrence, the engine over every op) agree to the nanosecond.
  std::string text = test::small_vlm_scenario(test::kImageTextData);
  text.insert(text.find(R"("options": {)") + 12,
              R"("ideal_network": true, "host_issue": false, "kernel_gap": false, )");
  const TrainingScenario scenario = test::load_scenario_text(text);
  DipOptions options;
  options.max_iterations = 8;
  const DipPlan plan = plan_dip(scenario, options);
  REQUIRE(plan.simulation);
  CHECK(plan.simulation->result.makespan == plan.schedule.makespan);
}

TEST_CASE("the stage model times transfers as the full simulator does, only a busy link delays more",
          "[dip][plan-simulation]") {
  // Each transfer delays its consumer by the send's time in both; the engine also queues sends
  // that share a link, which the stage model does not, so the executed plan is never faster.
  const TrainingScenario scenario = test::load_scenario_text(test::small_vlm_scenario(test::kImageTextData));
  DipOptions options;
  options.max_iterations = 8;
  const DipPlan plan = plan_dip(scenario, options);
  REQUIRE(plan.simulation);
  const TimeNs simulated = plan.simulation->result.makespan;
  CHECK(simulated >= plan.schedule.makespan);
  CHECK(static_cast<double>(simulated) <= 1.02 * static_cast<double>(plan.schedule.makespan));
  // Every stage's ops ran on its rank: one device per pipeline rank, named as measured traces
  // name ranks, and links for the transfers.
  CHECK(plan.simulation->graph.graph.device(DeviceId(0)).name == "stage 0 / tp 0 / dp 0");
  // Simulating the plan again gives the same time (the simulation is deterministic).
  CHECK(simulate_dip_plan(scenario, plan).result.makespan == simulated);
}

}  // namespace
}  // namespace weft::dip
