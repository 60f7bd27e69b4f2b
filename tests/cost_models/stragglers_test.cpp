#include "cost_models/stragglers.hpp"

#include <catch2/catch.hpp>

#include <memory>
#include <utility>

#include "cost_models/collective_model.hpp"
#include "cost_models/comm_group.hpp"

namespace weft {
namespace {

using Catch::Matchers::Contains;

Stragglers read_section(const std::string& text, std::int64_t gpus = 32, int gpus_per_node = 8) {
  const JsonDocument document = JsonDocument::parse_text(text, "cluster.json");
  return read_stragglers(document.root(), gpus, gpus_per_node);
}

std::string stragglers_error(const std::string& text) {
  try {
    read_section(text);
  } catch (const InputError& error) {
    return error.what();
  }
  return "no error";
}

TEST_CASE("stragglers: GPUs, nodes and NICs listed, causes multiplying", "[stragglers]") {
  const Stragglers parts = read_section(R"({"gpus": [{"gpu": 9, "speed": 0.5}, {"gpu": 30, "speed": 0.9}],
                                    "nodes": [{"node": 1, "speed": 0.8}],
                                    "nics": [{"node": 3, "speed": 0.25}]})");
  CHECK(parts.gpu(9) == Approx(0.4));  // 0.5 on its own, 0.8 with its node
  CHECK(parts.gpu(8) == Approx(0.8));
  CHECK(parts.gpu(15) == Approx(0.8));
  CHECK(parts.gpu(16) == 1.0);
  CHECK(parts.gpu(30) == Approx(0.9));
  CHECK(parts.gpu(1000) == 1.0);  // past the cluster
  CHECK(parts.nic(3) == 0.25);
  CHECK(parts.nic(0) == 1.0);
  REQUIRE(parts.slow_gpus().size() == 9);
  CHECK(parts.slow_gpus().front().first == 9);  // slowest first
  CHECK(parts.slow_gpus().back().first == 30);
  REQUIRE(parts.slow_nics().size() == 1);
  CHECK(parts.slow_nics().front() == std::pair<std::int64_t, double>{3, 0.25});
  CHECK(read_section("{}").empty());
}

TEST_CASE("stragglers: throttled GPUs are drawn per GPU from the seed", "[stragglers]") {
  const std::string text = R"({"throttled": {"share": 0.1, "speed": [0.7, 0.9], "seed": 7}})";
  const Stragglers a = read_section(text, 20000);
  const Stragglers b = read_section(text, 20000);
  CHECK(a.slow_gpus() == b.slow_gpus());
  // 10% of 20,000: a binomial count within 5 standard deviations (sd = 42.4).
  const auto count = static_cast<double>(a.slow_gpus().size());
  CHECK(std::abs(count - 2000.0) < 5 * std::sqrt(20000 * 0.1 * 0.9));
  for (const auto& [gpu, speed] : a.slow_gpus()) {
    CHECK(speed >= 0.7);
    CHECK(speed <= 0.9);
  }
  // The range changes how slow, not which GPUs.
  const Stragglers c = read_section(R"({"throttled": {"share": 0.1, "speed": [0.5, 0.5], "seed": 7}})", 20000);
  REQUIRE(c.slow_gpus().size() == a.slow_gpus().size());
  CHECK(c.gpu(a.slow_gpus().front().first) == 0.5);
  const Stragglers other_seed = read_section(R"({"throttled": {"share": 0.1, "speed": [0.7, 0.9], "seed": 8}})", 20000);
  CHECK(other_seed.slow_gpus() != a.slow_gpus());
}

TEST_CASE("stragglers: bad sections name the path", "[stragglers]") {
  CHECK_THAT(stragglers_error(R"({"gpus": [{"gpu": 32, "speed": 0.5}]})"),
             Contains("gpus[0].gpu") && Contains("below 32"));
  CHECK_THAT(stragglers_error(R"({"gpus": [{"gpu": 3, "speed": 1.5}]})"),
             Contains("gpus[0].speed") && Contains("(0, 1]"));
  CHECK_THAT(stragglers_error(R"({"gpus": [{"gpu": 3, "speed": 0}]})"), Contains("gpus[0].speed"));
  CHECK_THAT(stragglers_error(R"({"gpus": [{"gpu": 3, "speed": 0.5}, {"gpu": 3, "speed": 0.6}]})"),
             Contains("gpus[1].gpu") && Contains("listed twice"));
  CHECK_THAT(stragglers_error(R"({"nodes": [{"node": 4, "speed": 0.5}]})"),
             Contains("nodes[0].node") && Contains("below 4"));
  CHECK_THAT(stragglers_error(R"({"nics": [{"node": 0, "speed": 0.5, "gpu": 1}]})"),
             Contains("nics[0]") && Contains("gpu"));
  CHECK_THAT(stragglers_error(R"({"throttled": {"share": 1.5, "speed": [0.7, 0.9], "seed": 1}})"),
             Contains("throttled.share"));
  CHECK_THAT(stragglers_error(R"({"throttled": {"share": 0.1, "speed": [0.9, 0.7], "seed": 1}})"),
             Contains("throttled.speed") && Contains("slowest, fastest"));
  CHECK_THAT(stragglers_error(R"({"throttled": {"share": 0.1, "speed": [0.9], "seed": 1}})"),
             Contains("throttled.speed"));
  CHECK_THAT(stragglers_error(R"({"slow": []})"), Contains("slow"));
  CHECK_THAT(stragglers_error(R"({"nvlinks": [{"node": 99, "speed": 0.5}]})"),
             Contains("nvlinks[0].node: expected a node below"));
  CHECK_THAT(stragglers_error(R"({"nvlinks": [{"node": 0, "speed": 1.5}]})"),
             Contains("nvlinks[0].speed: expected a speed in (0, 1]"));
}

// Two nodes of 8 GPUs, NVLink at 400 GB/s, a 50 GB/s NIC per GPU, latency-bandwidth collectives.
ClusterSpec two_nodes(std::shared_ptr<const Stragglers> parts) {
  ClusterSpec cluster;
  cluster.gpus = 16;
  cluster.gpus_per_node = 8;
  cluster.nvlink_bandwidth = 400e9;
  cluster.nics_per_node = 8;
  cluster.nic_bandwidth = 50e9;
  cluster.collectives = CollectiveRules::latency_bandwidth;
  cluster.stragglers = std::move(parts);
  return cluster;
}

TEST_CASE("a slow NIC slows the collectives of the groups that cross it", "[stragglers][collectives]") {
  auto parts = std::make_shared<Stragglers>(16, 8);
  parts->slow_nic(1, 0.5);
  parts->finish();
  const ClusterSpec cluster = two_nodes(parts);
  // A DP group of one GPU per node, across both nodes; a TP group inside node 1 does not use NICs.
  const std::vector<std::int64_t> across{0, 8};
  const std::vector<std::int64_t> inside{8, 9, 10, 11};
  const CommGroup dp = make_comm_group(CommGroupKind::dp, across, cluster);
  const CommGroup tp = make_comm_group(CommGroupKind::tp, inside, cluster);
  CHECK(dp.network_speed == 0.5);
  CHECK(tp.network_speed == 1.0);
  // Ring all-reduce of 1 GB over 2 ranks: 2 (n-1)/n x size / bandwidth + 2 (n-1) latencies, the
  // bandwidth one GPU's NIC (50 GB/s) at half speed.
  const CollectiveModel model(cluster);
  const double expected = 2.0 * 0.5 * 1e9 / (50e9 * 0.5) + 2.0 * cluster.network_latency_s;
  CHECK(model.time(OpClass::allreduce, 1'000'000'000, dp, CollectiveAlgorithm::ring) == Approx(expected));
}

TEST_CASE("a slow NVLink slows the collectives of the groups with several members on its node",
          "[stragglers][collectives]") {
  auto parts = std::make_shared<Stragglers>(16, 8);
  parts->slow_nvlink(1, 0.5);
  parts->finish();
  CHECK(parts->slow_nvlinks() == std::vector<std::pair<std::int64_t, double>>{{1, 0.5}});
  const ClusterSpec cluster = two_nodes(parts);
  // A TP group inside node 1 runs on its NVLink; one inside node 0 and a DP group of one GPU per
  // node do not touch it.
  const std::vector<std::int64_t> slow_node{8, 9, 10, 11};
  const std::vector<std::int64_t> healthy_node{0, 1, 2, 3};
  const std::vector<std::int64_t> across{0, 8};
  const CommGroup tp = make_comm_group(CommGroupKind::tp, slow_node, cluster);
  CHECK(tp.nvlink_speed == 0.5);
  CHECK(make_comm_group(CommGroupKind::tp, healthy_node, cluster).nvlink_speed == 1.0);
  CHECK(make_comm_group(CommGroupKind::dp, across, cluster).nvlink_speed == 1.0);
  // Ring all-reduce of 1 GB over 4 ranks: 2 (n-1)/n x size / bandwidth + 2 (n-1) latencies, the
  // bandwidth NVLink's 400 GB/s at half speed.
  const CollectiveModel model(cluster);
  const double expected = 2.0 * 0.75 * 1e9 / (400e9 * 0.5) + 6.0 * cluster.nvlink_latency_s;
  CHECK(model.time(OpClass::allreduce, 1'000'000'000, tp, CollectiveAlgorithm::ring) == Approx(expected));
}

}  // namespace
}  // namespace weft
