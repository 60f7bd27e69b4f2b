#pragma once

#include <array>
#include <functional>
#include <optional>

#include "cost_models/cost_model.hpp"
#include "simulator/core/json_cursor.hpp"

namespace weft {

// Parameters of the roofline rule for one op class. The efficiencies are SEMU's α factors
// (papers/001 §4.1): the fraction of the device's peak an op of this class reaches.
struct RooflineRule {
  double flops_efficiency = 1.0;
  double memory_efficiency = 1.0;
  double network_efficiency = 1.0;
  TimeNs launch_overhead_ns = 0;
  // When set, ops of the class take this long whatever their work and device.
  std::optional<TimeNs> fixed_ns;
};

// t = max(FLOPs / (α_f·F), bytes / (α_m·B_mem), net / (α_n·B_net)) + launch overhead,
// with F the device's peak for the op's dtype. Each op class may carry its own rule, or a custom
// function that replaces the roofline for that class.
class RooflineCostModel final : public CostModel {
 public:
  using CustomRule = std::function<TimeNs(const OpWork&, const DeviceSpec&)>;

  explicit RooflineCostModel(const RooflineRule& default_rule = {});

  void set_rule(OpClass op_class, const RooflineRule& rule);
  void set_custom_rule(OpClass op_class, CustomRule rule);
  const RooflineRule& rule(OpClass op_class) const { return rules_[index(op_class)]; }

  TimeNs duration(const OpWork& work, const DeviceSpec& spec) const override;

  // The host's time to issue an op on a host-issued stream, whatever the device (docs/host-issue.md):
  // of every class without a time of its own, or of one class.
  void set_host_issue_ns(TimeNs ns);
  void set_host_issue_ns(OpClass op_class, TimeNs ns);
  TimeNs host_issue_ns(OpClass op_class, const DeviceSpec& /*spec*/) const override {
    return host_issue_by_class_[index(op_class)].value_or(host_issue_ns_);
  }

  // The device's gap between kernels queued back to back on a host-issued stream, whatever the
  // device (docs/host-issue.md).
  void set_kernel_gap_ns(TimeNs ns);
  TimeNs kernel_gap_ns(const DeviceSpec& /*spec*/) const override { return kernel_gap_ns_; }

  // Reads {"default": RULE, "classes": {"gemm": RULE, ...}, "host_issue_ns": t, "kernel_gap_ns": t} where RULE is
  // {"efficiency": {"flops": f, "memory": m, "network": n}, "launch_overhead_ns": t, "fixed_ns": t}.
  // A class rule starts from the default rule and changes only the fields it names.
  static RooflineCostModel from_json(const JsonCursor& json);

 private:
  static std::size_t index(OpClass op_class) { return static_cast<std::size_t>(op_class); }

  std::array<RooflineRule, kOpClassCount> rules_;
  std::array<CustomRule, kOpClassCount> custom_rules_;
  TimeNs host_issue_ns_ = 0;
  std::array<std::optional<TimeNs>, kOpClassCount> host_issue_by_class_{};
  TimeNs kernel_gap_ns_ = 0;
};

}  // namespace weft
