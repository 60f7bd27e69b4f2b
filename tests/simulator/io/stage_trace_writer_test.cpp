// The planned schedule's Chrome trace: a span per stage at its simulated times, flows between
// ranks, and an activation counter whose peak is the one the schedule's own accounting reports.
#include "simulator/io/stage_trace_writer.hpp"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <map>
#include <sstream>

#include "tests/simulator/planner/dip/dip_test_support.hpp"

namespace weft {
namespace {

TEST_CASE("the stage trace shows every stage, transfer and the activations each rank holds", "[dip][trace]") {
  const TrainingScenario scenario = test::load_scenario_text(test::small_vlm_scenario(test::kImageTextData));
  dip::DipOptions options;
  options.max_iterations = 8;
  const dip::DipPlan plan = dip::plan_dip(scenario, options);
  std::ostringstream out;
  write_stage_trace(out, scenario, plan);
  const auto trace = nlohmann::json::parse(out.str());
  std::size_t spans = 0;
  std::size_t flow_starts = 0;
  std::size_t flow_ends = 0;
  double last_end_us = 0.0;
  std::map<int, double> peak;  // per rank, bytes
  for (const auto& event : trace["traceEvents"]) {
    const std::string ph = event["ph"];
    if (ph == "X") {
      ++spans;
      last_end_us = std::max(last_end_us, event["ts"].get<double>() + event["dur"].get<double>());
    }
    flow_starts += ph == "s" ? 1 : 0;
    flow_ends += ph == "f" ? 1 : 0;
    if (ph == "C") {
      const double bytes = event["args"]["bytes"];
      CHECK(bytes >= 0);
      peak[event["pid"].get<int>()] = std::max(peak[event["pid"].get<int>()], bytes);
    }
  }
  CHECK(spans == plan.flows.stages.size());
  CHECK(flow_starts == flow_ends);
  CHECK(flow_starts > 0);
  CHECK(last_end_us == Approx(static_cast<double>(plan.schedule.makespan) / 1e3));
  // The counter, replayed in time, peaks where the schedule's per-rank order says it does.
  REQUIRE(peak.size() == plan.schedule.peak_memory.size());
  for (const auto& [rank, bytes] : peak)
    CHECK(bytes == static_cast<double>(plan.schedule.peak_memory[static_cast<std::size_t>(rank)]));
}

}  // namespace
}  // namespace weft
