#include "simulator/resilience/failure_model.hpp"

#include "simulator/core/split_text.hpp"
#include "simulator/core/units.hpp"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <limits>
#include <string>

namespace weft {
namespace {

// A century: no trace runs longer.
constexpr double kMaxTraceHours = 876000.0;

template <class Cause>
double total_rate_per_node_s(const std::vector<Cause>& causes) {
  double rate = 0.0;
  for (const Cause& cause : causes) rate += cause.rate_per_node_s;
  return rate;
}

// Failures per node per second of one cause: `mtbf_hours` per GPU or node, or `observed`
// {count, days, and gpus or nodes}.
double cause_rate_per_node_s(const JsonCursor& cause, int gpus_per_node) {
  const auto mtbf = cause.find("mtbf_hours");
  const auto observed = cause.find("observed");
  if (mtbf.has_value() == observed.has_value()) {
    cause.fail("expected one of mtbf_hours (with per: gpu or node) or observed ({count, days, gpus or nodes})");
  }
  if (!mtbf && cause.find("per")) cause.at("per").fail("applies with mtbf_hours only");
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

// A cause's `hours` (how long each of its events lasts), in seconds: at most a century.
double cause_hours_s(const JsonCursor& cause, bool may_be_zero) {
  const JsonCursor hours = cause.at("hours");
  const double value = may_be_zero ? hours.as_nonnegative_number() : hours.as_positive_number();
  if (value > kMaxTraceHours) hours.fail("expected at most 876000 hours");
  return value * kSecondsPerHour;
}

SlowdownCause load_slowdown(const JsonCursor& cause, int gpus_per_node) {
  cause.expect_only({"name", "mtbf_hours", "per", "observed", "hours", "speed"});
  SlowdownCause out;
  out.name = cause.at("name").as_string();
  out.rate_per_node_s = cause_rate_per_node_s(cause, gpus_per_node);
  out.duration_s = cause_hours_s(cause, false);
  const JsonCursor speed = cause.at("speed");
  out.speed = speed.as_positive_number();
  if (out.speed >= 1.0) speed.fail("expected a share of the healthy rate below 1");
  return out;
}

PlannedCause load_planned(const JsonCursor& cause, int gpus_per_node) {
  cause.expect_only({"name", "mtbf_hours", "per", "observed", "hours"});
  PlannedCause out;
  out.name = cause.at("name").as_string();
  out.rate_per_node_s = cause_rate_per_node_s(cause, gpus_per_node);
  out.downtime_s = cause_hours_s(cause, true);
  return out;
}

// Every cause of a list read with `load`; a list that is there holds at least one, and their
// rates add up to a finite rate.
template <class Load>
auto load_causes(const JsonCursor& list, const char* what, Load load) {
  std::vector<decltype(load(list))> out;
  for (const JsonCursor& cause : list.elements()) out.push_back(load(cause));
  if (out.empty()) list.fail(std::string("expected at least one cause of ") + what);
  if (!std::isfinite(total_rate_per_node_s(out))) list.fail("the causes' rates add up to no finite rate");
  return out;
}

}  // namespace

std::vector<TraceEvent> read_failure_trace(const std::filesystem::path& file) {
  // An event takes 24 bytes; its line, at least 6 ("1,1,2\n").
  constexpr Bytes kTraceBytesPerTextByte = 4;
  check_file_fits_memory(file, kTraceBytesPerTextByte);
  std::ifstream in(file);
  if (!in) throw InputError(file.string() + ": cannot read the failure trace");
  return read_failure_trace(in, file.string());
}

std::vector<TraceEvent> read_failure_trace(std::istream& in, const std::string& file) {
  std::vector<TraceEvent> events;
  std::string line;
  int number = 0;
  bool header = false;
  const auto fail = [&](const std::string& message) {
    throw InputError(file + ":" + std::to_string(number) + ": " + message);
  };
  const auto number_in = [&](const std::string& text, const char* column, const char* what) {
    std::size_t used = 0;
    double value = -1.0;
    try {
      value = std::stod(text, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used != text.size() || !(value >= 0.0) || value > kMaxTraceHours) {
      fail(std::string(column) + ": '" + text + "' is not " + what);
    }
    return value;
  };
  while (std::getline(in, line)) {
    ++number;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty() || line.front() == '#') continue;
    std::vector<std::string> fields;
    for (const std::string_view field : split_text(line, ',')) fields.emplace_back(field);
    if (!header) {
      if (line != "hours,nodes,down_hours") fail("expected the header hours,nodes,down_hours");
      header = true;
      continue;
    }
    if (fields.size() != 3) fail("expected 3 fields (hours,nodes,down_hours), found " + std::to_string(fields.size()));
    TraceEvent event;
    constexpr const char* kHours = "a number of hours from 0 to 876000";
    event.at_s = number_in(fields[0], "hours", kHours) * kSecondsPerHour;
    const double nodes = number_in(fields[1], "nodes", "a whole number of nodes from 1");
    if (nodes < 1 || nodes != std::floor(nodes) || nodes > (1 << 20)) fail("nodes: expected a whole number from 1");
    event.nodes = static_cast<int>(nodes);
    event.down_s = fields[2].empty() ? std::numeric_limits<double>::infinity()
                                     : number_in(fields[2], "down_hours", kHours) * kSecondsPerHour;
    events.push_back(event);
  }
  if (!header) throw InputError(file + ": expected the header hours,nodes,down_hours");
  std::stable_sort(events.begin(), events.end(), [](const auto& a, const auto& b) { return a.at_s < b.at_s; });
  return events;
}

double FailureModel::rate_per_s(std::int64_t nodes) const {
  return total_rate_per_node_s(causes) * static_cast<double>(nodes);
}

double FailureModel::slowdown_rate_per_s(std::int64_t nodes) const {
  return total_rate_per_node_s(slowdowns) * static_cast<double>(nodes);
}

double FailureModel::planned_rate_per_s(std::int64_t nodes) const {
  return total_rate_per_node_s(planned) * static_cast<double>(nodes);
}

FailureModel load_failure_model(const JsonCursor& json, int gpus_per_node, const std::filesystem::path& directory) {
  json.expect_only({"source", "causes", "rack_nodes", "trace", "notice_seconds", "slowdowns", "planned"});
  FailureModel model;
  if (auto source = json.find("source")) model.source = source->as_string();
  if (auto trace = json.find("trace")) {
    const std::filesystem::path file = directory / trace->as_string();
    model.trace = read_failure_trace(file);
  }
  if (auto slowdowns = json.find("slowdowns")) {
    model.slowdowns = load_causes(*slowdowns, "slowdowns",
                                  [&](const JsonCursor& cause) { return load_slowdown(cause, gpus_per_node); });
  }
  if (auto planned = json.find("planned")) {
    model.planned = load_causes(*planned, "planned stops",
                                [&](const JsonCursor& cause) { return load_planned(cause, gpus_per_node); });
  }
  const auto causes_json = json.find("causes");
  if (!causes_json && model.trace.empty() && model.slowdowns.empty() && model.planned.empty()) {
    json.fail("expected causes, a trace, slowdowns or planned stops");
  }
  const auto causes = causes_json ? causes_json->elements() : std::vector<JsonCursor>{};
  if (causes_json && causes.empty()) causes_json->fail("expected at least one cause (an empty list would never fail)");
  bool rack_wide = false;
  for (const JsonCursor& cause : causes) {
    model.causes.push_back(load_cause(cause, gpus_per_node));
    rack_wide = rack_wide || model.causes.back().blast_radius == BlastRadius::rack;
  }
  const auto rack_nodes = json.find("rack_nodes");
  if (rack_wide && !rack_nodes) json.fail("expected rack_nodes: a cause takes out whole racks");
  if (rack_nodes) model.rack_nodes = static_cast<int>(rack_nodes->as_int_in(1, 1 << 20));
  if (!std::isfinite(model.rate_per_s(1))) json.at("causes").fail("the causes' rates add up to no finite rate");
  if (auto notice = json.find("notice_seconds")) {
    model.notice_s = notice->as_nonnegative_number();
    if (model.notice_s > kSecondsPerHour) notice->fail("expected at most 3600 seconds of notice");
  }
  return model;
}

}  // namespace weft
