#include "simulator/resilience/failure_model.hpp"

#include "simulator/core/units.hpp"

#include <cmath>

namespace weft {
namespace {

// Failures per node per second of one cause: `mtbf_hours` per GPU or node, or `observed`
// {count, days, and gpus or nodes}.
double cause_rate_per_node_s(const JsonCursor& cause, int gpus_per_node) {
  const auto mtbf = cause.find("mtbf_hours");
  const auto observed = cause.find("observed");
  if (mtbf.has_value() == observed.has_value()) {
    cause.fail("expected one of mtbf_hours (with per: gpu or node) or observed ({count, days, gpus or nodes})");
  }
  if (mtbf) {
    const std::string per = cause.at("per").as_string();
    if (per != "gpu" && per != "node") cause.at("per").fail("'" + per + "' is not one of gpu or node");
    const double per_unit = 1.0 / (mtbf->as_positive_number() * kSecondsPerHour);
    return per == "gpu" ? per_unit * gpus_per_node : per_unit;
  }
  observed->expect_only({"count", "days", "gpus", "nodes"});
  const double count = static_cast<double>(observed->at("count").as_nonnegative_int());
  const double seconds = observed->at("days").as_positive_number() * kSecondsPerDay;
  const auto gpus = observed->find("gpus");
  const auto nodes = observed->find("nodes");
  if (gpus.has_value() == nodes.has_value()) observed->fail("expected one of gpus or nodes: the fleet observed");
  const double fleet_nodes = gpus ? static_cast<double>(gpus->as_positive_int()) / gpus_per_node
                                  : static_cast<double>(nodes->as_positive_int());
  return count / (fleet_nodes * seconds);
}

FailureCause load_cause(const JsonCursor& cause, int gpus_per_node) {
  cause.expect_only({"name", "mtbf_hours", "per", "observed", "blast_radius", "repair_hours", "repair"});
  FailureCause out;
  out.name = cause.at("name").as_string();
  out.rate_per_node_s = cause_rate_per_node_s(cause, gpus_per_node);
  if (!cause.find("mtbf_hours") && cause.find("per")) cause.at("per").fail("applies with mtbf_hours only");
  out.blast_radius = cause.at("blast_radius").as_enum(kBlastRadiusNames);
  const auto repair_hours = cause.find("repair_hours");
  if (out.blast_radius == BlastRadius::none) {
    if (repair_hours) repair_hours->fail("a failure of blast radius none takes no node out: no repair");
  } else {
    if (!repair_hours) cause.fail("expected repair_hours: how long a node it takes out stays out");
    out.repair_s = repair_hours->as_nonnegative_number() * kSecondsPerHour;
  }
  if (auto repair = cause.find("repair")) out.repair = repair->as_enum(kRepairDistributionNames);
  return out;
}

}  // namespace

double FailureModel::rate_per_s(std::int64_t nodes) const {
  double rate = 0.0;
  for (const FailureCause& cause : causes) rate += cause.rate_per_node_s;
  return rate * static_cast<double>(nodes);
}

FailureModel load_failure_model(const JsonCursor& json, int gpus_per_node) {
  json.expect_only({"source", "causes", "rack_nodes"});
  FailureModel model;
  if (auto source = json.find("source")) model.source = source->as_string();
  const auto causes = json.at("causes").elements();
  if (causes.empty()) json.at("causes").fail("expected at least one cause (an empty list would never fail)");
  bool rack_wide = false;
  for (const JsonCursor& cause : causes) {
    model.causes.push_back(load_cause(cause, gpus_per_node));
    rack_wide = rack_wide || model.causes.back().blast_radius == BlastRadius::rack;
  }
  const auto rack_nodes = json.find("rack_nodes");
  if (rack_wide && !rack_nodes) json.fail("expected rack_nodes: a cause takes out whole racks");
  if (rack_nodes) model.rack_nodes = static_cast<int>(rack_nodes->as_int_in(1, 1 << 20));
  if (!std::isfinite(model.rate_per_s(1))) json.at("causes").fail("the causes' rates add up to no finite rate");
  return model;
}

}  // namespace weft
