#include "cost_models/cluster_cost_model.hpp"

#include <algorithm>
#include <cmath>

#include "simulator/core/input_error.hpp"

namespace weft {

ClusterCostModel::ClusterCostModel(ClusterSpec cluster) : cluster_(std::move(cluster)), collectives_(cluster_) {}

std::uint32_t ClusterCostModel::add_group(const CommGroup& group) {
  const auto found = std::find(groups_.begin(), groups_.end(), group);
  if (found != groups_.end()) return static_cast<std::uint32_t>(found - groups_.begin()) + 1;
  groups_.push_back(group);
  return static_cast<std::uint32_t>(groups_.size());
}

std::vector<CommGroup> ClusterCostModel::placements_without_calibration() const {
  std::vector<CommGroup> missing;
  const CalibratedCostModel* calibration = cluster_.calibration.get();
  if (calibration == nullptr || calibration->communication().empty()) return missing;
  for (const CommGroup& group : groups_) {
    if (group.size < 2 || calibration->measured_placement(group.size, group.ranks_per_node)) continue;
    const bool listed = std::any_of(missing.begin(), missing.end(), [&](const CommGroup& g) {
      return g.size == group.size && g.ranks_per_node == group.ranks_per_node;
    });
    if (!listed) missing.push_back(group);
  }
  return missing;
}

namespace {

// An op that runs on the SMs other kernels leave it: its time alone stretched by the share it
// loses (compute-bound kernels scale with SMs; memory-bound ones are charged the same, a bound),
// on one SM at least.
TimeNs on_free_sms(TimeNs alone, double reserved_sms, const DeviceSpec& spec) {
  const double sms = spec.streaming_multiprocessors;
  if (reserved_sms <= 0.0 || sms <= 1.0) return alone;
  const double free = std::max(1.0, sms - reserved_sms);
  return static_cast<TimeNs>(std::llround(static_cast<double>(alone) * sms / free));
}

}  // namespace

TimeNs ClusterCostModel::host_issue_ns(OpClass op_class, const DeviceSpec& spec) const {
  // A framework op is the host's own time, charged whole as its duration.
  if (!host_issue_ || op_class == OpClass::host) return 0;
  if (const CalibratedCostModel* profile = cluster_.calibration_for(spec)) return profile->host_issue_ns(op_class);
  return cluster_.compute_rules.host_issue_ns(op_class, spec);
}

TimeNs ClusterCostModel::kernel_gap_ns(const DeviceSpec& spec) const {
  if (!kernel_gap_) return 0;
  if (const CalibratedCostModel* profile = cluster_.calibration_for(spec)) return profile->kernel_gap_ns();
  return cluster_.compute_rules.kernel_gap_ns(spec);
}

TimeNs ClusterCostModel::duration(const OpWork& work, const DeviceSpec& spec) const {
  const CalibratedCostModel* calibration = cluster_.calibration.get();
  // The framework's time around a layer (its shape: the nanoseconds): the host's, whatever the GPU.
  if (work.op_class == OpClass::host && work.shape.size() == 1) return work.shape[0];
  if (work.comm_group == 0) {
    TimeNs alone = -1;
    // Each GPU type by its own profile (a cluster of mixed types: node groups).
    if (const CalibratedCostModel* profile = cluster_.calibration_for(spec)) {
      if (const auto calibrated = profile->compute_duration(work)) alone = *calibrated;
    }
    if (alone < 0) alone = cluster_.compute_rules.duration(work, spec);
    // A straggler runs every kernel at its fraction of the healthy rate (launches included: a
    // throttled clock slows the whole GPU).
    if (spec.speed != 1.0) alone = static_cast<TimeNs>(std::llround(static_cast<double>(alone) / spec.speed));
    return on_free_sms(alone, work.reserved_sms, spec);
  }
  if (ideal_network_) return 0;
  const CommGroup& comm = group(work.comm_group);
  // A profile's times were measured on healthy links: a group through a slow NIC or NVLink is
  // costed by the collective model at the bandwidth that link delivers.
  if (calibration != nullptr && comm.network_speed == 1.0 && comm.nvlink_speed == 1.0) {
    if (const auto calibrated =
            calibration->communication_duration(work.op_class, work.network_bytes, comm.size, comm.ranks_per_node)) {
      return *calibrated;
    }
  }
  const double seconds = forced_algorithm_
                             ? collectives_.time(work.op_class, work.network_bytes, comm, *forced_algorithm_)
                             : collectives_.time(work.op_class, work.network_bytes, comm).seconds;
  return static_cast<TimeNs>(std::llround(seconds * kNsPerSecond));
}

}  // namespace weft
