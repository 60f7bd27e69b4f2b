#include "simulator/resilience/planned_stops.hpp"

#include "simulator/core/hash_mix.hpp"

namespace weft {
namespace {

constexpr std::uint64_t kStreamTag = 0x706c616e6e656421ULL;  // "planned!": a stream apart from the others

}  // namespace

PlannedStops::PlannedStops(const FailureModel& failures, std::int64_t job_nodes, std::uint64_t seed)
    : failures_(failures),
      random_(hash_mix(seed, kStreamTag)),
      rate_per_s_(failures.planned_rate_per_s(job_nodes)),
      next_(random_.exponential(rate_per_s_)) {}

double PlannedStops::take_next() {
  const PlannedCause& cause = cause_at(failures_.planned, random_.uniform() * failures_.planned_rate_per_s(1));
  next_ += random_.exponential(rate_per_s_);
  return cause.downtime_s;
}

}  // namespace weft
