// Published nccl-tests runs against weft's collective model (docs/collectives.md).
#include "calibration/published_collectives.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <map>
#include <tuple>

#include "cost_models/cluster_spec.hpp"
#include "cost_models/collective_model.hpp"
#include "simulator/core/input_error.hpp"
#include "simulator/io/csv.hpp"

namespace weft {
namespace {

constexpr std::array<const char*, 10> kColumns = {"cluster", "gpu",     "nodes",      "gpus_per_node", "collective",
                                                  "bytes",   "time_us", "busbw_GBps", "nvls",          "source"};

OpClass collective_op_class(const std::string& collective, const std::string& where) {
  static const std::map<std::string, OpClass> kNames = {{"all_reduce", OpClass::allreduce},
                                                        {"all_gather", OpClass::allgather},
                                                        {"reduce_scatter", OpClass::reducescatter},
                                                        {"alltoall", OpClass::alltoall},
                                                        {"sendrecv", OpClass::send},
                                                        {"broadcast", OpClass::broadcast}};
  const auto found = kNames.find(collective);
  if (found == kNames.end()) {
    throw InputError(where + ": '" + collective +
                     "' is not an nccl-tests collective (all_reduce, all_gather, reduce_scatter, alltoall, sendrecv or "
                     "broadcast)");
  }
  return found->second;
}

template <typename Number>
Number positive(const std::string& text, const std::string& where) {
  Number value{};
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size() || !(value > 0) || !std::isfinite(double(value))) {
    throw InputError(where + ": expected a positive number, got '" + text + "'");
  }
  return value;
}

// nccl-tests' bus bandwidth factor of a collective over n ranks.
double bus_factor(OpClass op_class, int n) {
  switch (op_class) {
    case OpClass::allreduce:
      return 2.0 * (n - 1) / n;
    case OpClass::allgather:
    case OpClass::reducescatter:
    case OpClass::alltoall:
      return (n - 1.0) / n;
    default:
      return 1.0;
  }
}

bool is_zero(const std::string& text) {
  double value = 1.0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  return error == std::errc() && end == text.data() + text.size() && value == 0.0;
}

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const std::size_t n = values.size();
  return n % 2 == 1 ? values[n / 2] : 0.5 * (values[n / 2 - 1] + values[n / 2]);
}

// The communicator of a run as the collective model places it. nccl-tests' sendrecv shifts a
// ring: across nodes its slowest pairs cross the network.
CommGroup run_group(const PublishedCollective& row) {
  if (row.op_class == OpClass::send) {
    return row.nodes > 1 ? CommGroup{CommGroupKind::pp, 2, 1, 2} : CommGroup{CommGroupKind::pp, 2, 2, 1};
  }
  return CommGroup{CommGroupKind::dp, row.nodes * row.gpus_per_node, row.gpus_per_node, row.nodes};
}

}  // namespace

std::vector<PublishedCollective> read_published_collectives(std::istream& in, const std::string& name) {
  std::vector<PublishedCollective> rows;
  std::map<std::string, std::size_t> column;
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    if (line.empty() || line.front() == '#') continue;
    const std::string where = name + ":" + std::to_string(number);
    const std::vector<std::string> fields = split_csv_line(line);
    if (column.empty()) {
      for (std::size_t i = 0; i < fields.size(); ++i) column[fields[i]] = i;
      for (const char* required : kColumns) {
        if (!column.contains(required)) throw InputError(where + ": the header has no column '" + required + "'");
      }
      continue;
    }
    if (fields.size() != column.size()) {
      throw InputError(where + ": " + std::to_string(fields.size()) + " fields, the header names " +
                       std::to_string(column.size()));
    }
    auto field = [&](const char* key) -> const std::string& { return fields[column.at(key)]; };
    auto at = [&](const char* key) { return where + ", column '" + key + "'"; };
    PublishedCollective row;
    row.cluster = field("cluster");
    row.gpu = field("gpu");
    row.nodes = positive<int>(field("nodes"), at("nodes"));
    row.gpus_per_node = positive<int>(field("gpus_per_node"), at("gpus_per_node"));
    if (row.nodes > (1 << 16) || row.gpus_per_node > 64) {
      throw InputError(at("nodes") + ": expected at most 65536 nodes of at most 64 GPUs");
    }
    if (row.nodes * row.gpus_per_node < 2) throw InputError(at("nodes") + ": a collective needs at least 2 GPUs");
    row.collective = field("collective");
    row.op_class = collective_op_class(row.collective, at("collective"));
    row.bytes = positive<Bytes>(field("bytes"), at("bytes"));
    // nccl-tests prints 0.00 for the bus bandwidth of the smallest sizes.
    row.busbw_gbps = is_zero(field("busbw_GBps")) ? 0.0 : positive<double>(field("busbw_GBps"), at("busbw_GBps"));
    if (!field("time_us").empty()) {
      row.time_us = positive<double>(field("time_us"), at("time_us"));
    } else if (row.busbw_gbps > 0.0) {
      // nccl-tests: busbw = bytes / time x the collective's bus factor.
      row.time_us = static_cast<double>(row.bytes) * bus_factor(row.op_class, row.nodes * row.gpus_per_node) /
                    (row.busbw_gbps * 1e9) * 1e6;
    } else {
      throw InputError(at("time_us") + ": empty, and no bus bandwidth to derive it from");
    }
    row.nvls = field("nvls");
    row.source = field("source");
    rows.push_back(std::move(row));
  }
  if (rows.empty()) throw InputError(name + ": no measurements (expected a header line and rows)");
  return rows;
}

std::vector<CollectiveRunResult> run_published_collectives(const std::vector<PublishedCollective>& rows) {
  using RunKey = std::tuple<std::string, std::string, int, int, std::string, std::string>;
  std::vector<RunKey> order;
  std::map<RunKey, std::vector<const PublishedCollective*>> runs;
  for (const PublishedCollective& row : rows) {
    const RunKey key{row.cluster, row.collective, row.nodes, row.gpus_per_node, row.nvls, row.source};
    if (!runs.contains(key)) order.push_back(key);
    runs[key].push_back(&row);
  }
  std::map<std::string, ClusterSpec> clusters;
  std::vector<CollectiveRunResult> results;
  for (const RunKey& key : order) {
    const auto& sizes = runs.at(key);
    const PublishedCollective& first = *sizes.front();
    if (!clusters.contains(first.cluster)) {
      const auto document = JsonDocument::parse_text(nlohmann::json(first.cluster).dump(), "cluster");
      clusters.emplace(first.cluster, load_cluster_spec(document.root()));
    }
    // A run with NVLink SHARP turned off (NCCL_NVLS_ENABLE=0) is costed without it.
    ClusterSpec cluster = clusters.at(first.cluster);
    if (first.nvls == "off") cluster.nvls_efficiency = 0.0;
    const CollectiveModel model(cluster);
    CollectiveRunResult result{first.cluster,       first.collective, first.nodes,
                               first.gpus_per_node, first.nvls,       first.source};
    std::vector<double> errors;
    for (const PublishedCollective* row : sizes) {
      const double predicted = model.time(row->op_class, row->bytes, run_group(*row)).seconds;
      const double error = row->time_us * 1e-6 / predicted - 1.0;
      errors.push_back(std::abs(error));
      if (row->bytes >= result.largest) {
        result.largest = row->bytes;
        result.measured_busbw_gbps = row->busbw_gbps;
        result.predicted_busbw_gbps = row->busbw_gbps * (1.0 + error);
        result.largest_error = error;
      }
    }
    result.sizes = static_cast<int>(sizes.size());
    result.median_abs_error = median(errors);
    results.push_back(std::move(result));
  }
  return results;
}

}  // namespace weft
