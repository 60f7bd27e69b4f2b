#include "simulator/resilience/slowdown_timeline.hpp"

#include <algorithm>

#include "simulator/core/hash_mix.hpp"

namespace weft {
namespace {

constexpr std::uint64_t kStreamTag = 0x736c6f77646f776eULL;  // "slowdown": a stream apart from the failures'

}  // namespace

SlowdownTimeline::SlowdownTimeline(const FailureModel& failures, std::vector<std::vector<double>> rates,
                                   std::int64_t job_nodes, std::uint64_t seed)
    : failures_(failures),
      rates_(std::move(rates)),
      random_(hash_mix(seed, kStreamTag)),
      total_rate_per_s_(failures.slowdown_rate_per_s(job_nodes)),
      next_start_(random_.exponential(total_rate_per_s_)) {}

double SlowdownTimeline::next_event() const {
  double next = next_start_;
  for (const auto& [end, rate] : active_) next = std::min(next, end);
  return next;
}

void SlowdownTimeline::handle_next_event() {
  const double now = next_event();
  if (now == next_start_) {
    const SlowdownCause& cause = cause_at(failures_.slowdowns, random_.uniform() * failures_.slowdown_rate_per_s(1));
    const std::vector<double>& stages = rates_[static_cast<std::size_t>(&cause - failures_.slowdowns.data())];
    const auto stage =
        std::min(static_cast<std::size_t>(random_.uniform() * static_cast<double>(stages.size())), stages.size() - 1);
    active_.emplace_back(now + cause.duration_s, stages[stage]);
    next_start_ = now + random_.exponential(total_rate_per_s_);
  } else {
    active_.erase(
        std::find_if(active_.begin(), active_.end(), [&](const auto& slowdown) { return slowdown.first == now; }));
  }
  rate_ = 1.0;
  for (const auto& [end, rate] : active_) rate_ = std::min(rate_, rate);
}

}  // namespace weft
