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
  const TraceComparison steady = compare_traces(summary, summary_of(1000, 1030, 3000));
  CHECK(steady.measured_rank_spread == Approx(0.03));
  CHECK_FALSE(steady.measured_disturbed());
}

}  // namespace
}  // namespace weft
