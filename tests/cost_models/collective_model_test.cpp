#include "cost_models/collective_model.hpp"

#include <catch2/catch.hpp>

#include "cost_models/cluster_cost_model.hpp"
#include "cost_models/parallel_dims.hpp"

namespace weft {
namespace {

using Catch::Matchers::Contains;

// Round numbers: 100 GB/s NVLink, 8 GPUs per node, one 25 GB/s (200 Gb/s) NIC per GPU.
ClusterSpec round_cluster(double nvlink_latency = 0.0, double network_latency = 0.0) {
  ClusterSpec cluster;
  cluster.name = "round";
  cluster.gpus = 1024;
  cluster.gpus_per_node = 8;
  cluster.nvlink_bandwidth = 100e9;
  cluster.nics_per_node = 8;
  cluster.nic_bandwidth = 25e9;
  cluster.nvlink_latency_s = nvlink_latency;
  cluster.network_latency_s = network_latency;
  return cluster;
}

CommGroup group(int size, int ranks_per_node, int nodes) {
  CommGroup g;
  g.size = size;
  g.ranks_per_node = ranks_per_node;
  g.nodes = nodes;
  return g;
}

// nccl-tests: algbw = S / t; busbw = algbw x factor, and on a flat topology a ring's busbw is the
// link bandwidth. So t = S x factor / B (plus latency).
TEST_CASE("inside a node, collective times follow the nccl-tests bus bandwidth formulas", "[collectives]") {
  const ClusterSpec cluster = round_cluster();
  const CollectiveModel model(cluster);
  const double bytes = 1e9, bandwidth = 100e9;
  for (int n : {2, 4, 8}) {
    INFO(n << " ranks");
    const CommGroup flat = group(n, n, 1);
    const double allreduce_factor = 2.0 * (n - 1) / n;
    const double gather_factor = (n - 1.0) / n;
    CHECK(model.time(OpClass::allreduce, 1'000'000'000, flat).seconds == Approx(bytes * allreduce_factor / bandwidth));
    CHECK(model.time(OpClass::allgather, 1'000'000'000, flat).seconds == Approx(bytes * gather_factor / bandwidth));
    CHECK(model.time(OpClass::reducescatter, 1'000'000'000, flat).seconds == Approx(bytes * gather_factor / bandwidth));
    CHECK(model.time(OpClass::broadcast, 1'000'000'000, flat).seconds == Approx(bytes / bandwidth));
    CHECK(model.time(OpClass::alltoall, 1'000'000'000, flat).seconds == Approx(bytes * gather_factor / bandwidth));
  }
}

TEST_CASE("latency adds one step per ring hop", "[collectives]") {
  const ClusterSpec cluster = round_cluster(1e-6, 5e-6);
  const CollectiveModel model(cluster);
  // 8 ranks in a node: an all-reduce is 2 x 7 steps of 1 us on top of its bandwidth term.
  CHECK(model.time(OpClass::allreduce, 0, group(8, 8, 1)).seconds == Approx(14e-6));
  // Across 4 nodes, each of the 2 x 31 ring steps is paced by the network's 5 us.
  CHECK(model.time(OpClass::allreduce, 0, group(32, 8, 4), CollectiveAlgorithm::ring) == Approx(62 * 5e-6));
  // The tree climbs log2(4) = 2 network levels and 7 NVLink hops, down and up.
  CHECK(model.time(OpClass::allreduce, 0, group(32, 8, 4), CollectiveAlgorithm::tree) ==
        Approx(2 * (2 * 5e-6 + 7 * 1e-6)));
  CHECK(model.time(OpClass::send, 0, group(2, 1, 2)).seconds == Approx(5e-6));
}

TEST_CASE("across nodes, the NICs of a node's members carry its traffic", "[collectives]") {
  const ClusterSpec cluster = round_cluster();
  const CollectiveModel model(cluster);
  // One rank per node (a DP group when TP fills the node): the ring runs at one NIC's 25 GB/s.
  const double one_per_node = model.time(OpClass::allreduce, 1'000'000'000, group(16, 1, 16)).seconds;
  CHECK(one_per_node == Approx(1e9 * 2 * 15 / 16 / 25e9));
  // Two ranks per node: each node's inter-node traffic uses two NICs.
  CHECK(model.time(OpClass::allgather, 1'000'000'000, group(16, 2, 8)).seconds == Approx(1e9 * 15.0 / 16 / 50e9));
  // A point-to-point transfer between nodes uses the sender's NIC, inside a node its NVLink.
  CHECK(model.time(OpClass::send, 1'000'000'000, group(2, 1, 2)).seconds == Approx(1e9 / 25e9));
  CHECK(model.time(OpClass::send, 1'000'000'000, group(2, 2, 1)).seconds == Approx(1e9 / 100e9));
}

TEST_CASE("hierarchical all-reduce is reduce-scatter, all-reduce across nodes, all-gather", "[collectives]") {
  const ClusterSpec cluster = round_cluster();
  const CollectiveModel model(cluster);
  const double s = 8e9;
  const double expected = s * 7 / 8 / 100e9             // reduce-scatter over 8 local ranks
                          + (s / 8) * 2 * 3 / 4 / 25e9  // all-reduce of a shard over 4 nodes
                          + s * 7 / 8 / 100e9;          // all-gather over 8 local ranks
  CHECK(model.time(OpClass::allreduce, 8'000'000'000, group(32, 8, 4), CollectiveAlgorithm::hierarchical) ==
        Approx(expected));
  // The cheapest algorithm is chosen.
  const CollectiveTime best = model.time(OpClass::allreduce, 8'000'000'000, group(32, 8, 4));
  for (CollectiveAlgorithm algorithm :
       {CollectiveAlgorithm::ring, CollectiveAlgorithm::tree, CollectiveAlgorithm::hierarchical}) {
    CHECK(best.seconds <= model.time(OpClass::allreduce, 8'000'000'000, group(32, 8, 4), algorithm));
  }
}

TEST_CASE("a fat tree's oversubscription divides the scale-out bandwidth", "[collectives]") {
  ClusterSpec cluster = round_cluster();
  cluster.topology = NetworkTopology::fat_tree;
  cluster.oversubscription = 2.0;
  CHECK(cluster.network_bandwidth_per_gpu() == Approx(12.5e9));
  const CollectiveModel model(cluster);
  CHECK(model.time(OpClass::send, 1'000'000'000, group(2, 1, 2)).seconds == Approx(1e9 / 12.5e9));
}

TEST_CASE("communicator placement follows Megatron's rank order", "[collectives]") {
  const ClusterSpec cluster = round_cluster();
  const ParallelDims dims{4, 1, 8, 2};  // tp 4, cp 1, dp 8, pp 2
  std::vector<std::int64_t> tp_group, dp_group;
  for (int tp = 0; tp < 4; ++tp) tp_group.push_back(dims.rank_of({tp, 0, 3, 1}));
  for (int dp = 0; dp < 8; ++dp) dp_group.push_back(dims.rank_of({1, 0, dp, 0}));
  CHECK(make_comm_group(CommGroupKind::tp, tp_group, cluster) == group(4, 4, 1));
  // DP ranks are 4 apart: two of them share each node.
  CHECK(make_comm_group(CommGroupKind::dp, dp_group, cluster) == CommGroup{CommGroupKind::dp, 8, 2, 4});
  CHECK(dims.coordinates_of(dims.rank_of({3, 0, 5, 1})).dp == 5);
  CHECK(dims.rank_of({3, 0, 5, 1}) == 3 + 4 * (5 + 8 * 1));
}

TEST_CASE("the cluster cost model costs communication by its group and compute by the roofline", "[collectives]") {
  ClusterCostModel cost(round_cluster());
  const std::uint32_t id = cost.add_group(group(8, 8, 1));
  CHECK(cost.add_group(group(8, 8, 1)) == id);  // equal placements share an id
  OpWork allreduce;
  allreduce.op_class = OpClass::allreduce;
  allreduce.network_bytes = 1'000'000'000;
  allreduce.comm_group = id;
  DeviceSpec gpu;
  gpu.name = "g";
  CHECK(cost.duration(allreduce, gpu) == 17'500'000);  // 1 GB x 2 x 7/8 / 100 GB/s
  cost.set_ideal_network(true);
  CHECK(cost.duration(allreduce, gpu) == 0);
}

TEST_CASE("bundled clusters load and partial overrides replace fields", "[collectives][spec]") {
  const auto document = JsonDocument::parse_text(R"({"base": "dgx-h100", "gpus": 512})", "test");
  const ClusterSpec cluster = load_cluster_spec(document.root());
  CHECK(cluster.gpus == 512);
  CHECK(cluster.gpu.name == "h100-sxm");
  CHECK(cluster.nic_bandwidth == Approx(50e9));  // 400 Gb/s
  CHECK(cluster.nics_per_node == 8);
  for (const char* name : {"dgx-a100-superpod", "dgx-h100", "h800-testbed"}) {
    const auto named = JsonDocument::parse_text(std::string("\"") + name + "\"", "test");
    CHECK(load_cluster_spec(named.root()).gpus == 16384);
  }
  const auto bad = JsonDocument::parse_text(R"({"base": "dgx-h100", "topology": "torus"})", "test");
  CHECK_THROWS_WITH(load_cluster_spec(bad.root()),
                    Contains("topology: 'torus' is not one of rail-optimized or fat-tree"));
  // The GPU clusters cost collectives by NCCL's model, with their measured efficiencies.
  CHECK(cluster.collectives == CollectiveRules::nccl);
  CHECK(cluster.nvls_efficiency == Approx(0.609));
  CHECK(cluster.nic_efficiency == Approx(0.978));
  for (const char* field : {"nic_efficiency", "nvls_efficiency"}) {
    const auto high = JsonDocument::parse_text(std::string(R"({"base": "dgx-h100", ")") + field + R"(": 1.5})", "test");
    CHECK_THROWS_WITH(load_cluster_spec(high.root()),
                      Contains(std::string(field) + ": expected an efficiency in (0, 1]"));
  }
  const auto rules = JsonDocument::parse_text(R"({"base": "dgx-h100", "collectives": "mpi"})", "test");
  CHECK_THROWS_WITH(load_cluster_spec(rules.root()),
                    Contains("collectives: 'mpi' is not one of nccl or latency-bandwidth"));
  const auto odd = JsonDocument::parse_text(R"({"base": "dgx-h100", "gpus": 12})", "test");
  CHECK_THROWS_WITH(load_cluster_spec(odd.root()), Contains("gpus: 12 GPUs do not fill whole nodes of 8"));
}

TEST_CASE("a cluster costs its GPU's ops by the GPU's bundled profile unless told otherwise", "[collectives][spec]") {
  auto cluster = [](const std::string& text) {
    const auto document = JsonDocument::parse_text(text, "test");
    return load_cluster_spec(document.root());
  };
  // "auto" (the default): scenarios/profiles/<gpu>.json where there is one.
  const ClusterSpec h100 = cluster(R"({"base": "dgx-h100", "gpus": 8})");
  REQUIRE(h100.calibration != nullptr);
  CHECK(h100.calibration->device() == "h100-sxm");
  CHECK(cluster(R"({"base": "dgx-h100", "gpu": "h800", "gpus": 8})").calibration->device() == "h800");
  CHECK(cluster(R"({"base": "dgx-h100", "gpus": 8, "calibration": "none"})").calibration == nullptr);
  CHECK(cluster(R"({"base": "dgx-h100", "gpus": 8, "calibration": "h100-sxm"})").calibration == h100.calibration);
  // A GPU without a bundled profile keeps the roofline.
  CHECK(cluster(R"({"base": "dgx-h100", "gpus": 8, "gpu": {"base": "h100-sxm", "name": "h100-custom"}})").calibration ==
        nullptr);
  CHECK_THROWS_WITH(cluster(R"({"base": "dgx-h100", "gpus": 8, "calibration": "a100-sxm-80gb"})"),
                    Contains("calibration: profile 'a100-sxm-80gb' was measured on 'a100-sxm-80gb', not on the "
                             "cluster's GPU 'h100-sxm'"));
  CHECK_THROWS_WITH(cluster(R"({"base": "dgx-h100", "gpus": 8, "calibration": "tpu"})"),
                    Contains("calibration: unknown calibration profile 'tpu' (known: a100-sxm-40gb, "));
}

}  // namespace
}  // namespace weft
