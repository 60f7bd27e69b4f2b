#pragma once

#include <optional>
#include <vector>

#include "cost_models/collective_model.hpp"
#include "cost_models/cost_model.hpp"

namespace weft {

// Costs a training workload on a cluster: compute and memory ops by the cluster's roofline rules
// on its GPU, communication ops by the collective model for the placement of their communicator
// (OpWork::comm_group). With an ideal network every communication op takes no time. A
// calibration profile on the cluster spec takes precedence for the ops it covers.
class ClusterCostModel final : public CostModel {
 public:
  explicit ClusterCostModel(ClusterSpec cluster);

  // Registers a communicator; equal placements share one id. Ids start at 1 (0 means none).
  std::uint32_t add_group(const CommGroup& group);
  const CommGroup& group(std::uint32_t id) const { return groups_.at(id - 1); }
  std::size_t group_count() const { return groups_.size(); }

  void set_ideal_network(bool ideal) { ideal_network_ = ideal; }
  // Off: no host holds back a host-issued stream (the scenario option "host_issue").
  void set_host_issue(bool on) { host_issue_ = on; }
  // Off: a host-issued stream's kernels follow each other with no gap (the scenario option
  // "kernel_gap").
  void set_kernel_gap(bool on) { kernel_gap_ = on; }
  void force_algorithm(std::optional<CollectiveAlgorithm> algorithm) { forced_algorithm_ = algorithm; }

  const ClusterSpec& cluster() const { return cluster_; }
  TimeNs duration(const OpWork& work, const DeviceSpec& spec) const override;
  // The profile's of the device's GPU type, or the cluster's roofline rules' (docs/host-issue.md).
  TimeNs host_issue_ns(OpClass op_class, const DeviceSpec& spec) const override;
  TimeNs kernel_gap_ns(const DeviceSpec& spec) const override;
  // The communicator placements of the groups added so far that the cluster's calibration profile
  // measured no communication over, when it measured some: their ops are costed by the collective
  // model, which the user should hear about.
  std::vector<CommGroup> placements_without_calibration() const;

 private:
  ClusterSpec cluster_;
  CollectiveModel collectives_;
  std::vector<CommGroup> groups_;
  bool ideal_network_ = false;
  bool host_issue_ = true;
  bool kernel_gap_ = true;
  std::optional<CollectiveAlgorithm> forced_algorithm_;
};

}  // namespace weft
