#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "calibration/trace_comparison.hpp"

namespace weft {
namespace {

// Stage 0 on ranks (pids) 1 and 2, stage 1 on rank 3; each rank computes one span on its compute
// thread and rank 1 also communicates on another thread.
TraceSummary summary_of(double rank1_us, double rank2_us, double rank3_us) {
  nlohmann::json events = nlohmann::json::array();
  const char* labels[] = {"stage 0 / tp 0 / dp 0 (x)", "stage 0 / tp 1 / dp 0 (x)", "stage 1 / tp 0 / dp 0 (x)"};
  const double compute_us[] = {rank1_us, rank2_us, rank3_us};
  for (int pid = 1; pid <= 3; ++pid) {
    const auto index = static_cast<std::size_t>(pid - 1);
    events.push_back(
        {{"ph", "M"}, {"name", "process_name"}, {"pid", pid}, {"tid", 0}, {"args", {{"name", labels[index]}}}});
    events.push_back({{"ph", "M"}, {"name", "thread_name"}, {"pid", pid}, {"tid", 1}, {"args", {{"name", "compute"}}}});
    events.push_back({{"ph", "M"}, {"name", "thread_name"}, {"pid", pid}, {"tid", 2}, {"args", {{"name", "tp comm"}}}});
    events.push_back({{"ph", "X"},
                      {"name", "g"},
                      {"pid", pid},
                      {"tid", 1},
                      {"ts", 0},
                      {"dur", compute_us[index]},
                      {"args", {{"class", "gemm"}}}});
  }
  events.push_back({{"ph", "X"},
                    {"name", "a"},
                    {"pid", 1},
                    {"tid", 2},
                    {"ts", 0},
                    {"dur", 5000},
                    {"args", {{"class", "allreduce"}}}});
  const nlohmann::json trace = {{"otherData", {{"makespan_ns", 1}}}, {"traceEvents", events}};
  const JsonDocument document = JsonDocument::parse_text(trace.dump(), "trace");
  return summarize_trace(document.root());
}

TEST_CASE("a trace's rank spread compares the compute time of a stage's ranks", "[calibration]") {
  // Stage 0: 1000 and 1250 us of compute (the all-reduce is not compute): 25% apart. Stage 1 has
  // one rank, so nothing to compare, however long it computed.
  const TraceSummary summary = summary_of(1000, 1250, 3000);
  CHECK(summary.rank_spread == Approx(0.25));
  CHECK(summary.compute_s.at(0) == Approx(1125e-6));
  CHECK(summary_of(1000, 1030, 9000).rank_spread == Approx(0.03));

  const TraceComparison comparison = compare_traces(summary_of(1000, 1000, 3000), summary);
  CHECK(comparison.measured_rank_spread == Approx(0.25));
  CHECK(comparison.measured_disturbed());
  // Stage 0 measured 1015 us per rank against 1000 simulated, stage 1 3090 against 3000: rates
  // 1.015 and 1.03, 1.5% apart.
  const TraceComparison steady = compare_traces(summary_of(1000, 1000, 3000), summary_of(1000, 1030, 3090));
  CHECK(steady.measured_rank_spread == Approx(0.03));
  CHECK(steady.measured_stage_rate_spread == Approx(0.015 / 1.015));
  CHECK_FALSE(steady.measured_disturbed());
}

TEST_CASE("a measured op's busy time, where the trace has it, is its op time", "[calibration]") {
  nlohmann::json events = nlohmann::json::array();
  events.push_back({{"ph", "M"},
                    {"name", "process_name"},
                    {"pid", 1},
                    {"tid", 0},
                    {"args", {{"name", "stage 0 / tp 0 / dp 0 (x)"}}}});
  events.push_back({{"ph", "M"}, {"name", "thread_name"}, {"pid", 1}, {"tid", 1}, {"args", {{"name", "compute"}}}});
  events.push_back({{"ph", "X"},
                    {"name", "g"},
                    {"pid", 1},
                    {"tid", 1},
                    {"ts", 0},
                    {"dur", 300},
                    {"args", {{"class", "gemm"}, {"busy_us", 200}}}});
  events.push_back(
      {{"ph", "X"}, {"name", "n"}, {"pid", 1}, {"tid", 1}, {"ts", 300}, {"dur", 50}, {"args", {{"class", "norm"}}}});
  const nlohmann::json trace = {{"otherData", {{"makespan_ns", 1}}}, {"traceEvents", events}};
  const JsonDocument document = JsonDocument::parse_text(trace.dump(), "trace");
  const TraceSummary summary = summarize_trace(document.root());
  CHECK(summary.class_s.at("gemm").at(0) == Approx(200e-6));
  CHECK(summary.class_s.at("norm").at(0) == Approx(50e-6));
  CHECK(summary.compute_s.at(0) == Approx(250e-6));
}

TEST_CASE("stages computing at different rates than simulated show a slow device of a pipeline", "[calibration]") {
  const TraceSummary simulated = summary_of(1000, 1000, 3000);
  // Stage 1's one rank took 3600 us where the simulation says 3000, stage 0's ranks as simulated:
  // no stage has ranks that disagree, but the stages' rates, 1.0 and 1.2, are 20% apart.
  const TraceComparison slow_stage = compare_traces(simulated, summary_of(1000, 1000, 3600));
  CHECK(slow_stage.measured_rank_spread == 0.0);
  CHECK(slow_stage.measured_stage_rate_spread == Approx(0.2));
  CHECK(slow_stage.measured_disturbed());
  // Every stage 20% over the simulation is the model's error, the same on every device.
  const TraceComparison uniform = compare_traces(simulated, summary_of(1200, 1200, 3600));
  CHECK(uniform.measured_stage_rate_spread == Approx(0.0).margin(1e-12));
  CHECK_FALSE(uniform.measured_disturbed());
  // A stage only one trace times has no rate: the other stage alone spreads nothing.
  TraceSummary one_stage = summary_of(1000, 1000, 3600);
  one_stage.compute_s.erase(1);
  CHECK(compare_traces(simulated, one_stage).measured_stage_rate_spread == 0.0);
}

}  // namespace
}  // namespace weft
