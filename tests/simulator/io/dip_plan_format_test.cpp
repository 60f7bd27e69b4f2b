// The planner's report and its plan file: every stage once, transfers launched and waited for on
// both sides in an order that cannot deadlock.
#include "simulator/io/dip_plan_format.hpp"

#include <catch2/catch.hpp>

#include <map>
#include <set>

#include "tests/simulator/planner/dip/dip_test_support.hpp"

namespace weft {
namespace {

using Catch::Matchers::Contains;

TEST_CASE("the plan lists each rank's stages and transfers in a runnable order", "[dip][plan-format]") {
  const TrainingScenario scenario = test::load_scenario_text(test::small_vlm_scenario(test::kImageTextData));
  dip::DipOptions options;
  options.max_iterations = 8;
  const dip::DipPlan plan = dip::plan_dip(scenario, options);
  const nlohmann::json json = dip_plan_json(scenario, plan);
  CHECK(json["format"] == "weft-dip-plan");
  CHECK(json["iteration_ms"].get<double>() == Approx(static_cast<double>(plan.schedule.makespan) / 1e6));
  REQUIRE(json["ranks"].size() == 2);

  std::size_t stages = 0;
  std::map<std::size_t, std::pair<int, int>> sends;     // transfer: (sender, receiver)
  std::map<std::size_t, std::pair<int, int>> receives;  // transfer: (receiver, sender)
  for (const auto& rank : json["ranks"]) {
    const int r = rank["rank"];
    std::set<std::size_t> launched, waited_send, posted, received;
    double last_start = 0.0;
    for (const auto& action : rank["actions"]) {
      const std::string kind = action["action"];
      if (kind == "forward_stage" || kind == "backward_stage") {
        ++stages;
        CHECK(action["start_ms"].get<double>() >= last_start);  // in time order
        last_start = action["start_ms"];
        CHECK(action["recompute"].size() ==
              action["layers"][1].get<std::size_t>() - action["layers"][0].get<std::size_t>());
        continue;
      }
      const std::size_t transfer = action["transfer"];
      const int peer = action["peer"];
      if (kind == "isend") {
        launched.insert(transfer);
        sends[transfer] = {r, peer};
      } else if (kind == "wait_isend") {
        CHECK(launched.count(transfer) == 1);  // waited for after it was launched
        waited_send.insert(transfer);
      } else if (kind == "irecv") {
        posted.insert(transfer);
        receives[transfer] = {r, peer};
      } else {
        REQUIRE(kind == "wait_irecv");
        CHECK(posted.count(transfer) == 1);
        received.insert(transfer);
      }
    }
    CHECK(waited_send == launched);
    CHECK(received == posted);
  }
  CHECK(stages == plan.flows.stages.size());
  // Each transfer is sent by one rank and received by its peer.
  REQUIRE(sends.size() == receives.size());
  for (const auto& [transfer, ends] : sends) {
    REQUIRE(receives.count(transfer) == 1);
    CHECK(receives.at(transfer) == std::pair<int, int>{ends.second, ends.first});
  }
}

TEST_CASE("the report shows the partition and the schedule of each step", "[dip][plan-format]") {
  const TrainingScenario scenario = test::load_scenario_text(test::small_vlm_scenario(test::kImageTextData));
  dip::DipOptions options;
  options.max_iterations = 8;
  const dip::DipPlan plan = dip::plan_dip(scenario, options);
  const std::string report = render_dip_report(scenario, plan, options);
  CHECK_THAT(report, Contains("Modality-aware partition") && Contains("  vision ") && Contains("  language ") &&
                         Contains("1f1b (the scenario's plan)") && Contains("+ model layer tuning") &&
                         Contains("under the full simulator"));
}

}  // namespace
}  // namespace weft
