#include "cost_models/cluster_spec.hpp"

#include <algorithm>

#include "cost_models/profile_format.hpp"
#include "simulator/core/scenario_library.hpp"
#include "simulator/core/spec_resolver.hpp"

namespace weft {
namespace {

// "calibration": "auto" (the default: the bundled profile of the GPU, if there is one), "none",
// or the name of a bundled profile measured on the cluster's GPU.
std::shared_ptr<const CalibratedCostModel> read_cluster_calibration(const JsonCursor& json, const DeviceSpec& gpu) {
  const auto value = json.find("calibration");
  const std::string name = value ? value->as_string() : "auto";
  if (name == "none") return nullptr;
  if (name == "auto") {
    if (!ScenarioLibrary::contains("profiles", gpu.name)) return nullptr;
    const nlohmann::json gpu_name(gpu.name);
    return load_bundled_profile(
        JsonCursor(gpu_name, json.path().empty() ? "calibration" : json.path() + ".calibration"));
  }
  auto profile = load_bundled_profile(*value);
  if (!gpu.is(profile->device())) {
    value->fail("profile '" + name + "' was measured on '" + profile->device() + "', not on the cluster's GPU '" +
                gpu.name + "' (name its profile, \"auto\" or \"none\")");
  }
  return profile;
}

// "node_groups": [{"first_node": 0, "nodes": 64, "gpu": "a100-sxm-80gb", "calibration": "auto"}]:
// ranges of nodes of other GPU types, inside the cluster and apart from each other.
std::vector<NodeGroup> read_node_groups(const JsonCursor& json, const ClusterSpec& cluster) {
  std::vector<NodeGroup> groups;
  const int nodes = cluster.nodes();
  for (const JsonCursor& entry : json.elements()) {
    entry.expect_only({"first_node", "nodes", "gpu", "calibration"});
    NodeGroup group;
    const JsonCursor first = entry.at("first_node");
    group.first_node = static_cast<int>(first.as_int_in(0, nodes - 1));
    const JsonCursor count = entry.at("nodes");
    group.nodes = static_cast<int>(count.as_int_in(1, nodes - group.first_node));
    group.gpu = load_device_spec(entry.at("gpu"));
    if (group.gpu.kind != cluster.gpu.kind) {
      entry.at("gpu").fail("expected a " + std::string(kDeviceKindNames.name(cluster.gpu.kind)) +
                           " like the cluster's gpu, got a " + std::string(kDeviceKindNames.name(group.gpu.kind)));
    }
    group.calibration = read_cluster_calibration(entry, group.gpu);
    for (const NodeGroup& other : groups) {
      if (group.first_node < other.first_node + other.nodes && other.first_node < group.first_node + group.nodes) {
        first.fail("nodes " + std::to_string(group.first_node) + ".." +
                   std::to_string(group.first_node + group.nodes - 1) + " overlap an earlier group's");
      }
    }
    groups.push_back(std::move(group));
  }
  return groups;
}

ClusterSpec parse_cluster_spec(const JsonCursor& json) {
  json.expect_only({"name",
                    "description",
                    "source",
                    "gpu",
                    "gpus",
                    "gpus_per_node",
                    "nvlink_GBps",
                    "nics_per_node",
                    "nic_Gbps",
                    "topology",
                    "oversubscription",
                    "nvlink_latency_us",
                    "network_latency_us",
                    "cost",
                    "network_efficiency",
                    "nic_efficiency",
                    "nvls_efficiency",
                    "calibration",
                    "collectives",
                    "stragglers",
                    "node_groups"});
  ClusterSpec spec;
  spec.name = json.find("name") ? json.at("name").as_string() : "inline";
  spec.gpu = load_device_spec(json.at("gpu"));
  if (spec.gpu.kind == DeviceKind::link) json.at("gpu").fail("expected a GPU or CPU spec, got a link");
  spec.calibration = read_cluster_calibration(json, spec.gpu);
  auto positive_int = [&](const char* key) {
    const JsonCursor value = json.at(key);
    const std::int64_t number = value.as_positive_int();
    if (number > (1 << 24)) value.fail("expected at most 16777216");
    return static_cast<int>(number);
  };
  spec.gpus = positive_int("gpus");
  spec.gpus_per_node = positive_int("gpus_per_node");
  if (spec.gpus % spec.gpus_per_node != 0 && spec.gpus > spec.gpus_per_node) {
    json.at("gpus").fail(std::to_string(spec.gpus) + " GPUs do not fill whole nodes of " +
                         std::to_string(spec.gpus_per_node));
  }
  spec.nvlink_bandwidth = json.at("nvlink_GBps").as_positive_number() * kBytesPerGB;
  spec.nics_per_node = positive_int("nics_per_node");
  // Gb/s to bytes/s.
  spec.nic_bandwidth = json.at("nic_Gbps").as_positive_number() * 1e9 / 8.0;
  spec.topology = json.at("topology").as_enum(kNetworkTopologyNames);
  if (auto value = json.find("oversubscription")) {
    spec.oversubscription = value->as_number();
    if (spec.oversubscription < 1.0) value->fail("expected a ratio >= 1 (1 means non-blocking)");
  }
  spec.collectives = spec.gpu.kind == DeviceKind::gpu ? CollectiveRules::nccl : CollectiveRules::latency_bandwidth;
  if (auto value = json.find("collectives")) spec.collectives = value->as_enum(kCollectiveRulesNames);
  if (auto value = json.find("nvlink_latency_us")) spec.nvlink_latency_s = value->as_nonnegative_number() * 1e-6;
  if (auto value = json.find("network_latency_us")) spec.network_latency_s = value->as_nonnegative_number() * 1e-6;
  if (auto value = json.find("cost")) spec.compute_rules = RooflineCostModel::from_json(*value);
  auto efficiency = [](const JsonCursor& value) {
    const double number = value.as_positive_number();
    if (number > 1.0) value.fail("expected an efficiency in (0, 1]");
    return number;
  };
  if (auto value = json.find("network_efficiency")) spec.network_efficiency = efficiency(*value);
  spec.nic_efficiency = spec.network_efficiency;
  if (auto value = json.find("nic_efficiency")) spec.nic_efficiency = efficiency(*value);
  if (auto value = json.find("nvls_efficiency")) spec.nvls_efficiency = efficiency(*value);
  if (auto value = json.find("node_groups")) spec.node_groups = read_node_groups(*value, spec);
  if (auto value = json.find("stragglers")) {
    auto stragglers = std::make_shared<Stragglers>(read_stragglers(*value, spec.gpus, spec.gpus_per_node));
    if (!stragglers->empty()) spec.stragglers = std::move(stragglers);
  }
  return spec;
}

}  // namespace

double ClusterSpec::network_bandwidth_per_gpu() const {
  const double nics_per_gpu = static_cast<double>(nics_per_node) / gpus_per_node;
  const double spine = topology == NetworkTopology::fat_tree ? oversubscription : 1.0;
  return nic_bandwidth * nics_per_gpu / spine;
}

int ClusterSpec::node_group_of(std::int64_t rank) const {
  const std::int64_t node = rank / gpus_per_node;
  for (std::size_t g = 0; g < node_groups.size(); ++g) {
    const NodeGroup& group = node_groups[g];
    if (node >= group.first_node && node < group.first_node + group.nodes) return static_cast<int>(g);
  }
  return -1;
}

const CalibratedCostModel* ClusterSpec::calibration_for(const DeviceSpec& spec) const {
  if (spec.name == gpu.name) return calibration.get();
  for (const NodeGroup& group : node_groups) {
    if (spec.name == group.gpu.name) return group.calibration.get();
  }
  return nullptr;
}

double ClusterSpec::mean_peak(Dtype dtype, std::int64_t count) const {
  if (node_groups.empty() || count <= 0) return gpu.peak(dtype);
  double total = 0.0;
  for (std::int64_t rank = 0; rank < count; ++rank) total += gpu_of_group(node_group_of(rank)).peak(dtype);
  return total / static_cast<double>(count);
}

Bytes ClusterSpec::largest_memory() const {
  Bytes largest = gpu.memory_capacity;
  for (const NodeGroup& group : node_groups) largest = std::max(largest, group.gpu.memory_capacity);
  return largest;
}

ClusterSpec load_cluster_spec(const JsonCursor& json) {
  return load_spec<ClusterSpec>(json, "clusters", "cluster", parse_cluster_spec);
}

}  // namespace weft
