#include "simulator/resilience/goodput_study.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "simulator/resilience/checkpoint_interval.hpp"

namespace weft {
namespace {

constexpr int kIntervalTrials = 25;
constexpr double kIntervalRange = 16.0;  // each way from Young's interval

double mean_goodput(const RunSetup& setup, const std::vector<RunOutcome>& runs) {
  double sum = 0.0;
  for (const RunOutcome& run : runs) sum += goodput_tokens_per_s(setup, run);
  return sum / static_cast<double>(runs.size());
}

// Whole numbers of iterations, log-spaced over [low_s, high_s], distinct, at least one.
std::vector<double> trial_intervals(double iteration_s, double low_s, double high_s) {
  std::vector<double> out;
  for (int i = 0; i < kIntervalTrials; ++i) {
    const double at = low_s * std::pow(high_s / low_s, static_cast<double>(i) / (kIntervalTrials - 1));
    const double interval = std::max(1.0, std::round(at / iteration_s)) * iteration_s;
    if (out.empty() || interval > out.back()) out.push_back(interval);
  }
  return out;
}

}  // namespace

Spread spread_of(std::vector<double> values) {
  Spread out;
  if (values.empty()) return out;
  std::sort(values.begin(), values.end());
  out.mean = std::accumulate(values.begin(), values.end(), 0.0) / static_cast<double>(values.size());
  const auto rank = [&](double percent) {
    const auto index = static_cast<std::size_t>(std::ceil(percent / 100.0 * static_cast<double>(values.size())));
    return values[std::max<std::size_t>(index, 1) - 1];
  };
  out.p5 = rank(5);
  out.p50 = rank(50);
  out.p95 = rank(95);
  return out;
}

double goodput_tokens_per_s(const RunSetup& setup, const RunOutcome& run) {
  return run.trained_s / setup.iteration_s * setup.tokens_per_iteration / run.wall_s;
}

std::vector<RunOutcome> simulate_runs(const RunSetup& setup, std::uint64_t first_seed, int seeds,
                                      const RunProgress& progress) {
  std::vector<RunOutcome> runs;
  runs.reserve(static_cast<std::size_t>(seeds));
  for (int i = 0; i < seeds; ++i) {
    runs.push_back(simulate_run(setup, first_seed + static_cast<std::uint64_t>(i)));
    if (progress) progress(runs.size(), static_cast<std::size_t>(seeds));
  }
  return runs;
}

double job_mtbf_s(const RunSetup& setup) { return 1.0 / setup.failures.rate_per_s(setup.job_nodes); }

IntervalSearch search_checkpoint_interval(const RunSetup& setup, std::uint64_t first_seed, int seeds,
                                          const RunProgress& progress) {
  IntervalSearch out;
  const double mtbf_s = job_mtbf_s(setup);
  if (!std::isfinite(mtbf_s)) {
    out.best_interval_s = std::numeric_limits<double>::infinity();
    return out;
  }
  RunSetup trial = setup;
  trial.timeline_points = 0;
  trial.recovery.checkpoint.enabled = true;
  const double young_s = young_interval_s(setup.recovery.checkpoint_stall_s(setup.job_gpus), mtbf_s);
  // No shorter than makes the most checkpoints weft simulates in a run.
  const double shortest = std::max(young_s / kIntervalRange, setup.horizon_s / kMaxCheckpointsPerRun);
  const std::vector<double> intervals =
      trial_intervals(setup.iteration_s, shortest, std::max(shortest, young_s * kIntervalRange));
  const std::size_t total = intervals.size() * static_cast<std::size_t>(seeds);
  for (const double interval : intervals) {
    trial.recovery.checkpoint.interval_s = interval;
    const std::size_t done = out.trials.size() * static_cast<std::size_t>(seeds);
    const auto runs = simulate_runs(trial, first_seed, seeds, [&](std::size_t runs_done, std::size_t) {
      if (progress) progress(done + runs_done, total);
    });
    out.trials.push_back({interval, mean_goodput(trial, runs)});
  }
  // The best goodput; on a tie, the shorter interval (less work at stake).
  const auto best = std::max_element(out.trials.begin(), out.trials.end(), [](const auto& a, const auto& b) {
    return a.goodput_tokens_per_s < b.goodput_tokens_per_s;
  });
  out.best_interval_s = best->interval_s;
  return out;
}

GoodputStudy run_goodput_study(const RunSetup& setup, std::uint64_t first_seed, int seeds,
                               const RunProgress& search_progress, const RunProgress& progress) {
  GoodputStudy study{.setup = setup, .search = std::nullopt, .first_seed = first_seed, .seeds = seeds, .runs = {}};
  CheckpointPolicy& checkpoint = study.setup.recovery.checkpoint;
  if (checkpoint.enabled && !checkpoint.interval_s) {
    study.search = search_checkpoint_interval(setup, first_seed, seeds, search_progress);
    checkpoint.interval_s = study.search->best_interval_s;
  }
  study.runs = simulate_runs(study.setup, first_seed, seeds, progress);
  return study;
}

}  // namespace weft
