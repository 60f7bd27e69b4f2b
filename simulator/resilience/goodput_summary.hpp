#pragma once

#include <array>
#include <cstdint>
#include <string_view>

#include "simulator/resilience/goodput_study.hpp"

namespace weft {

// Where a run's wall-clock time goes, in RunOutcome's order.
enum class TimeCategory : std::uint8_t {
  kept,
  lost,
  checkpoints,
  restarts,
  waiting,
  maintenance,
  reconfiguration,
  degraded
};
inline constexpr std::size_t kTimeCategories = static_cast<std::size_t>(TimeCategory::degraded) + 1;
inline constexpr std::array<std::string_view, kTimeCategories> kTimeCategoryNames = {
    "training kept",       "training lost",       "checkpoints",     "restarts and reloads",
    "waiting for repairs", "planned maintenance", "reconfiguration", "degraded throughput"};
std::array<double, kTimeCategories> time_categories_s(const RunOutcome& run);

// A study's figures, as every report shows them.
struct GoodputSummary {
  double healthy_tokens_per_s = 0.0;
  double mtbf_s = 0.0;  // the job's, every node in service (infinite: nothing fails)
  double checkpoint_stall_s = 0.0;
  double checkpoint_durable_s = 0.0;
  double restart_s = 0.0;  // with the reload
  double young_interval_s = 0.0;
  double daly_interval_s = 0.0;
  Spread goodput_tokens_per_s;
  Spread healthy_share;  // goodput over the healthy run's throughput
  Spread interruptions;
  Spread reconfigurations;
  Spread checkpoints;
  Spread planned_stops;
  std::array<Spread, kTimeCategories> hours;  // kTimeCategoryNames
  Spread wall_days;                           // with a token target: the time to train it (and save it)
  std::int64_t unfinished = 0;                // runs that did not train the target in the days given
};

GoodputSummary summarize(const GoodputStudy& study);

}  // namespace weft
