#include "cost_models/roofline_cost_model.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "simulator/core/input_error.hpp"

namespace weft {
namespace {

void check_efficiency(double efficiency, const char* what) {
  if (!(efficiency > 0.0 && efficiency <= 1.0)) {
    throw InputError(std::string(what) + " efficiency must be in (0, 1], got " + std::to_string(efficiency));
  }
}

void check_rule(const RooflineRule& rule) {
  check_efficiency(rule.flops_efficiency, "flops");
  check_efficiency(rule.memory_efficiency, "memory");
  check_efficiency(rule.network_efficiency, "network");
  if (rule.launch_overhead_ns < 0) throw InputError("launch overhead must be >= 0");
  if (rule.fixed_ns && *rule.fixed_ns < 0) throw InputError("fixed duration must be >= 0");
}

// Seconds needed for `amount` at `capacity` per second; throws when the device lacks the capacity.
double term_seconds(double amount, double capacity, double efficiency, const std::string& missing) {
  if (amount <= 0.0) return 0.0;
  if (capacity <= 0.0) throw InputError(missing);
  return amount / (efficiency * capacity);
}

RooflineRule parse_rule(const JsonCursor& json, RooflineRule rule) {
  json.expect_only({"efficiency", "launch_overhead_ns", "fixed_ns"});
  if (auto efficiency = json.find("efficiency")) {
    efficiency->expect_only({"flops", "memory", "network"});
    auto read = [&](const char* key, double& field) {
      if (auto value = efficiency->find(key)) {
        field = value->as_positive_number();
        if (field > 1.0) value->fail("expected an efficiency in (0, 1]");
      }
    };
    read("flops", rule.flops_efficiency);
    read("memory", rule.memory_efficiency);
    read("network", rule.network_efficiency);
  }
  if (auto overhead = json.find("launch_overhead_ns")) rule.launch_overhead_ns = overhead->as_nonnegative_int();
  if (auto fixed = json.find("fixed_ns")) rule.fixed_ns = fixed->as_nonnegative_int();
  return rule;
}

}  // namespace

RooflineCostModel::RooflineCostModel(const RooflineRule& default_rule) {
  check_rule(default_rule);
  rules_.fill(default_rule);
}

void RooflineCostModel::set_rule(OpClass op_class, const RooflineRule& rule) {
  check_rule(rule);
  rules_[index(op_class)] = rule;
}

void RooflineCostModel::set_host_issue_ns(TimeNs ns) {
  if (ns < 0) throw InputError("host issue time must be >= 0");
  host_issue_ns_ = ns;
}

void RooflineCostModel::set_host_issue_ns(OpClass op_class, TimeNs ns) {
  if (ns < 0) throw InputError("host issue time must be >= 0");
  host_issue_by_class_[index(op_class)] = ns;
}

void RooflineCostModel::set_kernel_gap_ns(TimeNs ns) {
  if (ns < 0) throw InputError("kernel gap must be >= 0");
  kernel_gap_ns_ = ns;
}

void RooflineCostModel::set_custom_rule(OpClass op_class, CustomRule rule) {
  custom_rules_[index(op_class)] = std::move(rule);
}

TimeNs RooflineCostModel::duration(const OpWork& work, const DeviceSpec& spec) const {
  if (const CustomRule& custom = custom_rules_[index(work.op_class)]) return custom(work, spec);
  const RooflineRule& rule = rules_[index(work.op_class)];
  if (rule.fixed_ns) return *rule.fixed_ns;

  const std::string dtype(kDtypeNames.name(work.dtype));
  const double compute = term_seconds(work.flops, spec.peak(work.dtype), rule.flops_efficiency,
                                      "device spec '" + spec.name + "' has no " + dtype + " peak FLOP/s");
  const double memory = term_seconds(static_cast<double>(work.memory_bytes), spec.memory_bandwidth,
                                     rule.memory_efficiency, "device spec '" + spec.name + "' has no memory bandwidth");
  const double network =
      term_seconds(static_cast<double>(work.network_bytes), spec.network_bandwidth, rule.network_efficiency,
                   "device spec '" + spec.name + "' has no network bandwidth");
  const double nanoseconds = std::max({compute, memory, network}) * kNsPerSecond;
  // Keep far from int64 overflow so that sums of durations stay exact.
  if (nanoseconds > 1e17) throw InputError("op duration exceeds 10^17 ns");
  return static_cast<TimeNs>(std::llround(nanoseconds)) + rule.launch_overhead_ns;
}

RooflineCostModel RooflineCostModel::from_json(const JsonCursor& json) {
  json.expect_only({"default", "classes", "host_issue_ns", "kernel_gap_ns"});
  RooflineRule default_rule;
  if (auto value = json.find("default")) default_rule = parse_rule(*value, default_rule);
  RooflineCostModel model(default_rule);
  if (auto classes = json.find("classes")) {
    for (const auto& [name, value] : classes->members()) {
      auto op_class = kOpClassNames.parse(name);
      if (!op_class) value.fail("unknown op class (expected " + kOpClassNames.choices() + ")");
      model.set_rule(*op_class, parse_rule(value, default_rule));
    }
  }
  if (auto host = json.find("host_issue_ns")) model.set_host_issue_ns(host->as_nonnegative_int());
  if (auto gap = json.find("kernel_gap_ns")) model.set_kernel_gap_ns(gap->as_nonnegative_int());
  return model;
}

}  // namespace weft
