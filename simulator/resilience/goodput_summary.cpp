#include "simulator/resilience/goodput_summary.hpp"

#include <vector>

#include "simulator/core/units.hpp"
#include "simulator/resilience/checkpoint_interval.hpp"

namespace weft {
namespace {

template <class Field>
Spread spread_over(const std::vector<RunOutcome>& runs, Field field) {
  std::vector<double> values;
  values.reserve(runs.size());
  for (const RunOutcome& run : runs) values.push_back(field(run));
  return spread_of(std::move(values));
}

}  // namespace

std::array<double, kTimeCategories> time_categories_s(const RunOutcome& run) {
  return {run.trained_s, run.lost_s,        run.checkpoint_s,  run.restart_s,
          run.waiting_s, run.maintenance_s, run.reconfigure_s, run.degraded_s};
}

GoodputSummary summarize(const GoodputStudy& study) {
  const RunSetup& setup = study.setup;
  GoodputSummary out;
  out.healthy_tokens_per_s = setup.tokens_per_iteration / setup.iteration_s;
  out.mtbf_s = job_mtbf_s(setup);
  out.checkpoint_stall_s = setup.recovery.checkpoint_stall_s(setup.job_gpus);
  out.checkpoint_durable_s = setup.recovery.checkpoint_durable_s(setup.job_gpus);
  out.restart_s = setup.recovery.restart_s + setup.recovery.reload_s();
  out.young_interval_s = young_interval_s(out.checkpoint_stall_s, out.mtbf_s);
  out.daly_interval_s = daly_interval_s(out.checkpoint_stall_s, out.mtbf_s);
  const auto& runs = study.runs;
  out.goodput_tokens_per_s = spread_over(runs, [&](const RunOutcome& run) { return goodput_tokens_per_s(setup, run); });
  out.healthy_share = spread_over(runs, [&](const RunOutcome& run) { return run.trained_s / run.wall_s; });
  out.interruptions = spread_over(runs, [](const RunOutcome& run) { return static_cast<double>(run.interruptions); });
  out.reconfigurations =
      spread_over(runs, [](const RunOutcome& run) { return static_cast<double>(run.reconfigurations); });
  out.checkpoints = spread_over(runs, [](const RunOutcome& run) { return static_cast<double>(run.checkpoints); });
  out.planned_stops = spread_over(runs, [](const RunOutcome& run) { return static_cast<double>(run.planned_stops); });
  for (std::size_t i = 0; i < out.hours.size(); ++i) {
    out.hours[i] =
        spread_over(runs, [&](const RunOutcome& run) { return time_categories_s(run)[i] / kSecondsPerHour; });
  }
  out.wall_days = spread_over(runs, [](const RunOutcome& run) { return run.wall_s / kSecondsPerDay; });
  for (const RunOutcome& run : runs) out.unfinished += setup.target_tokens && !run.reached_target ? 1 : 0;
  return out;
}

}  // namespace weft
