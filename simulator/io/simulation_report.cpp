#include "simulator/io/simulation_report.hpp"

#include <fmt/format.h>

#include "simulator/core/format_units.hpp"
#include "simulator/core/version.hpp"
#include "simulator/engine/critical_path.hpp"
#include "simulator/io/text_table.hpp"

namespace weft {
namespace {

constexpr std::size_t kLongestOpsShown = 5;

double utilization(const DeviceResult& device, TimeNs makespan) {
  return makespan > 0 ? static_cast<double>(device.busy_ns) / static_cast<double>(makespan) : 0.0;
}

DeviceId device_id(std::size_t index) { return DeviceId(static_cast<DeviceId::value_type>(index)); }

std::string render_devices(const Graph& graph, const SimulationResult& result) {
  TextTable table;
  table.add_column("device", TextTable::Align::left);
  table.add_column("kind", TextTable::Align::left);
  table.add_column("busy", TextTable::Align::right);
  table.add_column("util", TextTable::Align::right);
  for (std::size_t c = 0; c < kOpCategoryCount; ++c) {
    table.add_column(std::string(kOpCategoryNames.name(static_cast<OpCategory>(c))), TextTable::Align::right);
  }
  table.add_column("peak memory", TextTable::Align::right);
  table.add_column("capacity", TextTable::Align::right);
  table.add_column("oom", TextTable::Align::left);
  for (std::size_t d = 0; d < graph.device_count(); ++d) {
    const DeviceResult& device = result.devices[d];
    const DeviceSpec& spec = graph.device_spec(device_id(d));
    std::vector<std::string> row{graph.device(device_id(d)).name, std::string(kDeviceKindNames.name(spec.kind)),
                                 format_duration(device.busy_ns), format_percent(utilization(device, result.makespan))};
    for (TimeNs busy : device.busy_by_category) row.push_back(busy == 0 ? "-" : format_duration(busy));
    const bool has_memory = spec.kind != DeviceKind::link;
    row.push_back(has_memory ? format_bytes(device.peak_memory) : "-");
    row.push_back(device.memory_capacity > 0 ? format_bytes(device.memory_capacity) : "-");
    row.push_back(device.oom ? "OOM" : (device.memory_capacity > 0 ? "no" : "-"));
    table.add_row(std::move(row));
  }
  return table.render("  ");
}

std::string render_critical_path(const Graph& graph, const SimulationResult& result) {
  const CriticalPathSummary summary = summarize_critical_path(graph, result, kLongestOpsShown);
  std::string out =
      fmt::format("Critical path: {} ops, {}", result.critical_path.size(), format_duration(summary.length));
  // A path that does not start at 0 starts at an op its host held back: nothing ran before it on
  // the path (docs/host-issue.md).
  if (!result.critical_path.empty() && result.start(result.critical_path.front()) > 0) {
    out += fmt::format(", from {}, when the host issued its first op",
                       format_duration(result.start(result.critical_path.front())));
  }
  out += "\n";
  std::string parts;
  for (std::size_t c = 0; c < kOpCategoryCount; ++c) {
    if (summary.by_category[c] == 0) continue;
    parts += fmt::format("{}{} {} ({})", parts.empty() ? "" : ", ", kOpCategoryNames.name(static_cast<OpCategory>(c)),
                         format_duration(summary.by_category[c]),
                         format_percent(static_cast<double>(summary.by_category[c]) /
                                        static_cast<double>(std::max<TimeNs>(summary.length, 1))));
  }
  if (!parts.empty()) out += "  by category: " + parts + "\n";
  std::string devices;
  for (std::size_t d = 0; d < graph.device_count(); ++d) {
    if (summary.by_device[d] == 0) continue;
    devices += fmt::format("{}{} {}", devices.empty() ? "" : ", ", graph.device(device_id(d)).name,
                           format_duration(summary.by_device[d]));
  }
  if (!devices.empty()) out += "  by device:   " + devices + "\n";
  if (!summary.longest_ops.empty()) {
    TextTable table;
    table.add_column("longest ops on the path", TextTable::Align::left);
    table.add_column("class", TextTable::Align::left);
    table.add_column("device", TextTable::Align::left);
    table.add_column("start", TextTable::Align::right);
    table.add_column("duration", TextTable::Align::right);
    for (OpId op : summary.longest_ops) {
      table.add_row({graph.display_name(op), std::string(kOpClassNames.name(graph.op_work(op).op_class)),
                     graph.device(graph.op_device(op)).name, format_duration(result.start(op)),
                     format_duration(result.duration(op))});
    }
    out += table.render("  ");
  }
  return out;
}

}  // namespace

std::string render_simulation_report(const Graph& graph, const SimulationResult& result) {
  std::string out =
      fmt::format("Graph: {} ops, {} tensors, {} devices, {} streams, {} collectives\n", graph.op_count(),
                  graph.tensor_count(), graph.device_count(), graph.stream_count(), graph.collective_count());
  out += fmt::format("Makespan: {}\n\n", format_duration(result.makespan));
  out += "Devices (busy: time with at least one op running; categories: summed op time)\n";
  out += render_devices(graph, result);
  std::size_t oom_devices = 0;
  for (const DeviceResult& device : result.devices) oom_devices += device.oom ? 1 : 0;
  if (oom_devices > 0) out += fmt::format("  OUT OF MEMORY on {} device(s)\n", oom_devices);
  out += "\n" + render_critical_path(graph, result);
  return out;
}

nlohmann::json simulation_result_json(const Graph& graph, const SimulationResult& result) {
  nlohmann::json devices = nlohmann::json::array();
  for (std::size_t d = 0; d < graph.device_count(); ++d) {
    const DeviceResult& device = result.devices[d];
    nlohmann::json by_category = nlohmann::json::object();
    for (std::size_t c = 0; c < kOpCategoryCount; ++c) {
      by_category[std::string(kOpCategoryNames.name(static_cast<OpCategory>(c)))] = device.busy_by_category[c];
    }
    const DeviceSpec& spec = graph.device_spec(device_id(d));
    devices.push_back({{"name", graph.device(device_id(d)).name},
                       {"kind", kDeviceKindNames.name(spec.kind)},
                       {"spec", spec.name},
                       {"busy_ns", device.busy_ns},
                       {"utilization", utilization(device, result.makespan)},
                       {"busy_by_category_ns", std::move(by_category)},
                       {"peak_memory_bytes", device.peak_memory},
                       {"peak_memory_time_ns", device.peak_memory_time},
                       {"memory_capacity_bytes", device.memory_capacity},
                       {"oom", device.oom}});
  }
  const CriticalPathSummary summary = summarize_critical_path(graph, result, 0);
  nlohmann::json path_ops = nlohmann::json::array();
  for (OpId op : result.critical_path) path_ops.push_back(graph.display_name(op));
  nlohmann::json path_by_category = nlohmann::json::object();
  for (std::size_t c = 0; c < kOpCategoryCount; ++c) {
    path_by_category[std::string(kOpCategoryNames.name(static_cast<OpCategory>(c)))] = summary.by_category[c];
  }
  return {
      {"weft_version", version()},
      {"makespan_ns", result.makespan},
      {"op_count", graph.op_count()},
      {"devices", std::move(devices)},
      {"critical_path",
       {{"length_ns", summary.length}, {"by_category_ns", std::move(path_by_category)}, {"ops", std::move(path_ops)}}}};
}

}  // namespace weft
