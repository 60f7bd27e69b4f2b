#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

#include "simulator/resilience/run_simulation.hpp"

namespace weft {

// A value over the seeds of a study: its mean and percentiles (nearest rank).
struct Spread {
  double mean = 0.0;
  double p5 = 0.0;
  double p50 = 0.0;
  double p95 = 0.0;
};

Spread spread_of(std::vector<double> values);

// Tokens trained per wall-clock second in `run` (checkpointed or not: what the run has trained
// when it stops).
double goodput_tokens_per_s(const RunSetup& setup, const RunOutcome& run);

// Called with the runs done so far and the runs to do in all.
using RunProgress = std::function<void(std::size_t done, std::size_t total)>;

// The runs of seeds first_seed .. first_seed + seeds − 1.
std::vector<RunOutcome> simulate_runs(const RunSetup& setup, std::uint64_t first_seed, int seeds,
                                      const RunProgress& progress = {});

// A checkpoint interval tried by the search, and the mean goodput of its runs.
struct IntervalTrial {
  double interval_s = 0.0;
  double goodput_tokens_per_s = 0.0;
};

struct IntervalSearch {
  std::vector<IntervalTrial> trials;  // by interval
  double best_interval_s = 0.0;       // infinite when nothing fails: only the trained model is saved
};

// Searches for the checkpoint interval with the best mean goodput over the same seeds (common
// random numbers, so that intervals are compared on the same failures): whole numbers of
// iterations spaced evenly in log from Young's interval / 16 to Young's × 16 (at least one
// iteration, and no more than kMaxCheckpointsPerRun a run).
IntervalSearch search_checkpoint_interval(const RunSetup& setup, std::uint64_t first_seed, int seeds,
                                          const RunProgress& progress = {});

// The job's mean time between interruptions with every node in service.
double job_mtbf_s(const RunSetup& setup);

// The runs of a setup over many seeds, its checkpoint interval searched for first when none is
// given.
struct GoodputStudy {
  RunSetup setup;  // with the interval the runs used
  std::optional<IntervalSearch> search;
  std::uint64_t first_seed = 1;
  int seeds = 0;
  std::vector<RunOutcome> runs;
};

// `search_progress` follows the interval search, `progress` the runs.
GoodputStudy run_goodput_study(const RunSetup& setup, std::uint64_t first_seed, int seeds,
                               const RunProgress& search_progress = {}, const RunProgress& progress = {});

}  // namespace weft
