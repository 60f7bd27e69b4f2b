#pragma once

#include <cstdint>
#include <filesystem>
#include <istream>
#include <string>
#include <vector>

#include "simulator/core/enum_names.hpp"
#include "simulator/core/json_cursor.hpp"

namespace weft {

// What one failure takes out of service: nothing (the job stops and restarts on the same nodes:
// a software bug, a collective's timeout), the node it happened on, or every node of its rack
// (a top-of-rack switch, a rack's power).
enum class BlastRadius : std::uint8_t { none, node, rack };
inline constexpr EnumNames<BlastRadius, 3> kBlastRadiusNames({"none", "node", "rack"});

// How long a node stays out for repair: exactly the mean, or exponentially distributed around it.
enum class RepairDistribution : std::uint8_t { fixed, exponential };
inline constexpr EnumNames<RepairDistribution, 2> kRepairDistributionNames({"fixed", "exponential"});

// One cause of interruptions (a component's failures, or the software's), as a Poisson process
// on every node the cluster has in service.
struct FailureCause {
  std::string name;
  double rate_per_node_s = 0.0;  // failures per node per second
  BlastRadius blast_radius = BlastRadius::node;
  double repair_s = 0.0;  // mean time out of service (none: 0)
  RepairDistribution repair = RepairDistribution::fixed;
};

// A cause of slowdowns: one GPU of a node keeps training, slower, for a while (a throttled clock, a
// degraded part), as a Poisson process on every node the job trains on. A synchronous job runs at
// the pace its slowest GPU allows.
struct SlowdownCause {
  std::string name;
  double rate_per_node_s = 0.0;  // slowdowns per node per second
  double duration_s = 0.0;
  double speed = 1.0;  // the slowed GPU's share of its healthy rate, in (0, 1)
};

// A cause of planned stops (automated maintenance such as a firmware upgrade, an operator's
// configuration or dataset update), as a Poisson process on every node the job trains on: the job
// writes a whole checkpoint, stops for `downtime_s`, and restarts.
struct PlannedCause {
  std::string name;
  double rate_per_node_s = 0.0;  // planned stops per node per second
  double downtime_s = 0.0;
};

// A failure replayed from a trace: at `at_s`, `nodes` healthy nodes drawn at random go out for
// `down_s` (infinite: they never come back), as spot instances are preempted.
struct TraceEvent {
  double at_s = 0.0;
  int nodes = 1;
  double down_s = 0.0;
};

struct FailureModel {
  std::string source;
  std::vector<FailureCause> causes;
  std::vector<TraceEvent> trace;  // by time
  int rack_nodes = 0;             // nodes a rack-wide failure takes out; 0 when no cause has that radius
  // How long before a failure that takes nodes out the job is told of it, as a cloud announces a
  // spot preemption; 0: failures come unannounced.
  double notice_s = 0.0;
  std::vector<SlowdownCause> slowdowns;
  std::vector<PlannedCause> planned;

  // Failures per second over `nodes` nodes in service, all causes together.
  double rate_per_s(std::int64_t nodes) const;
  // Slowdowns per second over `nodes` nodes, all causes together.
  double slowdown_rate_per_s(std::int64_t nodes) const;
  // Planned stops per second of a job on `nodes` nodes, all causes together.
  double planned_rate_per_s(std::int64_t nodes) const;
};

// The cause a draw falls on, in proportion to the causes' rates: `pick` is uniform over [0, the
// sum of their rate_per_node_s). Failure, slowdown and planned causes alike; `causes` is not empty.
template <class Cause>
const Cause& cause_at(const std::vector<Cause>& causes, double pick) {
  for (const Cause& cause : causes) {
    if (pick < cause.rate_per_node_s) return cause;
    pick -= cause.rate_per_node_s;
  }
  return causes.back();
}

// Reads `failures` of a resilience file (docs/resilience.md). A cause's rate (of failures, of
// slowdowns or of planned stops) is given per GPU or per node, either as a mean time between failures (`mtbf_hours`)
// or as what a fleet observed (`observed`: a count of failures over so many GPUs or nodes and
// days); `gpus_per_node` turns either into a rate per node. A `trace` file is read relative to
// `directory`.
FailureModel load_failure_model(const JsonCursor& json, int gpus_per_node, const std::filesystem::path& directory);

// Reads a failure trace: CSV lines `hours,nodes,down_hours` after a header of those names (down
// hours empty: never back; lines starting with # are comments); errors name the file and line.
std::vector<TraceEvent> read_failure_trace(const std::filesystem::path& file);
// The same from a stream; `file` names it in errors.
std::vector<TraceEvent> read_failure_trace(std::istream& in, const std::string& file);

}  // namespace weft
