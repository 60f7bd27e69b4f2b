#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <unordered_map>
#include <vector>

#include "cost_models/cost_model.hpp"
#include "simulator/engine/engine.hpp"
#include "simulator/engine/schedule_cache.hpp"
#include "simulator/graph/subgraph.hpp"

namespace weft {

// Finds, or simulates and caches, the schedule of a subgraph template in a situation: how late
// each of its secondary streams frees after its start. Within one simulate() call.
class TemplateScheduler {
 public:
  TemplateScheduler(const CostModel& cost_model, const SimulationOptions& options, ScheduleCache& cache)
      : cost_model_(cost_model), options_(options), cache_(cache) {}
  ~TemplateScheduler() {
    cache_.count_hits(remembered_hits_);
    cache_.count_lookups(lookups_, timed_lookups_, timed_lookup_ns_, cache_search_ns_);
  }
  TemplateScheduler(const TemplateScheduler&) = delete;
  TemplateScheduler& operator=(const TemplateScheduler&) = delete;

  // `offsets`: per template stream, how late after the composite's origin the stream frees;
  // `host_offsets`: when (from the origin) the host of each host-issued stream has issued every
  // op before the composite, or kHostAhead.
  std::shared_ptr<const TemplateSchedule> schedule(const Subgraph& subgraph, std::span<const TimeNs> offsets,
                                                   std::span<const TimeNs> host_offsets);

  // The host's time to issue the template's ops on its stream `stream` (nested templates'
  // included).
  TimeNs issued_host_ns(const Subgraph& subgraph, std::size_t stream);

 private:
  std::shared_ptr<const TemplateSchedule> look_up(const Subgraph& subgraph, std::span<const TimeNs> offsets,
                                                  std::span<const TimeNs> host_offsets);
  // find_or_simulate, timed outside any template's simulation.
  std::shared_ptr<const TemplateSchedule> timed_find_or_simulate(const Subgraph& subgraph, std::vector<TimeNs> offsets,
                                                                 std::span<const TimeNs> host_offsets);
  std::shared_ptr<const TemplateSchedule> find_or_simulate(const Subgraph& subgraph, std::vector<TimeNs> offsets,
                                                           std::span<const TimeNs> host_offsets);
  // The template's TemplateSchedule::host_slack under `schedule`.
  std::vector<TimeNs> host_slack(const Subgraph& subgraph, const TemplateSchedule& schedule);

  // A hash of the durations and host issue times of the template's ops under the cost model
  // (nested templates included): with the structure hash, what the schedule depends on.
  std::uint64_t durations_hash(const Subgraph& subgraph);

  const CostModel& cost_model_;
  const SimulationOptions& options_;
  ScheduleCache& cache_;
  std::unordered_map<const Subgraph*, std::uint64_t> durations_;
  std::unordered_map<const Subgraph*, std::vector<TimeNs>> issued_host_;  // per template stream
  // Each template's schedule when its streams are free (the usual case), found once per run.
  std::unordered_map<const Subgraph*, std::shared_ptr<const TemplateSchedule>> unshifted_;
  std::uint64_t remembered_hits_ = 0;  // lookups unshifted_ answered, counted as the cache's hits
  // Timing, outside any template's simulation: the lookups, those sampled and their time but for
  // searches of the shared cache; each search's time (with and without the simulations it ran);
  // the simulations of templates.
  std::uint64_t lookups_ = 0;
  std::uint64_t timed_lookups_ = 0;
  std::int64_t timed_lookup_ns_ = 0;
  std::int64_t searched_ns_ = 0;
  std::int64_t cache_search_ns_ = 0;
  std::int64_t simulation_ns_ = 0;
};

}  // namespace weft
