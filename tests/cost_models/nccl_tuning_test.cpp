#include "cost_models/nccl_tuning.hpp"

#include <catch2/catch.hpp>

#include "cost_models/collective_model.hpp"

namespace weft {
namespace {

// Hand computations from NCCL's tuner (src/graph/tuning.cc at 5067397c): time = latency + bytes /
// algorithm bandwidth, latencies in us from its baseLatencies and hwLatencies tables.
constexpr double kBus = 368e9;  // an H100 node's ring bus bandwidth
const NcclLinks kH100{kBus, 90};

CommGroup placement(int size, int ranks_per_node, int nodes) {
  return CommGroup{CommGroupKind::dp, size, ranks_per_node, nodes};
}

double nccl_seconds(OpClass op_class, NcclAlgorithm algorithm, NcclProtocol protocol, Bytes bytes, const CommGroup& g,
                    const NcclLinks& links = kH100) {
  const auto time = nccl_collective_seconds(op_class, algorithm, protocol, bytes, g, links);
  REQUIRE(time.has_value());
  return *time;
}

TEST_CASE("a ring all-reduce in a node: each protocol's latency and bandwidth", "[collectives][nccl]") {
  const CommGroup node = placement(8, 8, 1);
  const double bytes = 1 << 20;
  // 2 x 7 steps; LL: base 6.6 + 0.6 per NVLink hop, half the bus bandwidth up to Hopper's 141 GB/s.
  CHECK(nccl_seconds(OpClass::allreduce, NcclAlgorithm::ring, NcclProtocol::ll, 1 << 20, node) ==
        Approx((6.6 + 14 * 0.6) * 1e-6 + bytes / (141e9 * 8 / 14)));
  // LL128: base 14 + 1.9 per hop, 120 of 128 bytes (0.92) of the bus.
  CHECK(nccl_seconds(OpClass::allreduce, NcclAlgorithm::ring, NcclProtocol::ll128, 1 << 20, node) ==
        Approx((14.0 + 14 * 1.9) * 1e-6 + bytes / (0.92 * kBus * 8 / 14)));
  // Simple: base 8.4 + 3.4 per hop, the whole bus.
  CHECK(nccl_seconds(OpClass::allreduce, NcclAlgorithm::ring, NcclProtocol::simple, 1 << 20, node) ==
        Approx((8.4 + 14 * 3.4) * 1e-6 + bytes / (kBus * 8 / 14)));
  // An all-gather takes 7 steps and moves 7/8 of the buffer.
  CHECK(nccl_seconds(OpClass::allgather, NcclAlgorithm::ring, NcclProtocol::simple, 1 << 20, node) ==
        Approx((8.4 + 7 * 3.4) * 1e-6 + bytes / (kBus * 8 / 7)));
  // LL's ceiling is lower on an Ampere GPU: 87.7 GB/s.
  CHECK(nccl_seconds(OpClass::allreduce, NcclAlgorithm::ring, NcclProtocol::ll, 1 << 20, node, {kBus, 80}) ==
        Approx((6.6 + 14 * 0.6) * 1e-6 + bytes / (87.7e9 * 8 / 14)));
}

TEST_CASE("a ring across nodes pays network hops, the host's overhead and the plateau factor", "[collectives][nccl]") {
  // 2 nodes of 8: 30 steps, 2 of them across the network (14 us each for Simple); the NVLink hops
  // cost at least the network's 3 x 1 us host overhead; large all-reduces x 1.4 (sm80 on).
  const double bytes = 1 << 30;
  CHECK(nccl_seconds(OpClass::allreduce, NcclAlgorithm::ring, NcclProtocol::simple, 1 << 30, placement(16, 8, 2)) ==
        Approx((8.4 + 28 * 3.4 + 2 * 14.0) * 1.4 * 1e-6 + bytes / (kBus * 16 / 30)));
  // One rank per node on 4 nodes, LL: every hop a network hop at the tree's 5 us; LL's ceiling
  // across more than 2 nodes is 20.4 GB/s.
  CHECK(nccl_seconds(OpClass::allreduce, NcclAlgorithm::ring, NcclProtocol::ll, 4096, placement(4, 1, 4), {45e9, 90}) ==
        Approx((6.6 + 6 * 5.0) * 1e-6 + 4096.0 / (20.4e9 * 4 / 6)));
}

TEST_CASE("the tree: logarithmic latency, half the bus bandwidth, NCCL's size correction", "[collectives][nccl]") {
  const CommGroup cluster = placement(1024, 8, 128);
  // 1 GiB is past the correction table: 0.92 of the bus, halved; latency 8.4 + 2 (7 x 4 + 7 x 14).
  CHECK(nccl_seconds(OpClass::allreduce, NcclAlgorithm::tree, NcclProtocol::simple, 1 << 30, cluster) ==
        Approx((8.4 + 2 * (7 * 4.0 + 7 * 14.0)) * 1e-6 + double(1 << 30) / (0.92 * kBus * 0.5)));
  // 1 MiB: log2(2^20 / 64) = 14, where Simple's correction is 0.5.
  CHECK(nccl_seconds(OpClass::allreduce, NcclAlgorithm::tree, NcclProtocol::simple, 1 << 20, cluster) ==
        Approx((8.4 + 2 * (7 * 4.0 + 7 * 14.0)) * 1e-6 + double(1 << 20) / (0.92 * kBus * 0.5 * 0.5)));
  // With one GPU per node NCCL's plain tree pattern takes 0.85 of the bus bandwidth.
  CHECK(nccl_seconds(OpClass::allreduce, NcclAlgorithm::tree, NcclProtocol::simple, 1 << 30, placement(128, 1, 128),
                     {45e9, 90}) ==
        Approx((8.4 + 2 * (7 * 14.0)) * 1e-6 + double(1 << 30) / (0.92 * 0.85 * 45e9 * 0.5)));
  // Trees only all-reduce.
  CHECK_FALSE(
      nccl_collective_seconds(OpClass::allgather, NcclAlgorithm::tree, NcclProtocol::simple, 1 << 20, cluster, kH100));
}

// DGX H100 nodes costed by NCCL's model: NVLink at 368 of 450 GB/s, 8 x 400 Gb/s NICs.
ClusterSpec h100_cluster(double nvls_efficiency = 0.0) {
  ClusterSpec cluster;
  cluster.gpus = 8192;
  cluster.nvlink_bandwidth = 450e9;
  cluster.nics_per_node = 8;
  cluster.nic_bandwidth = 50e9;
  cluster.network_efficiency = 368.0 / 450.0;
  cluster.collectives = CollectiveRules::nccl;
  cluster.nvls_efficiency = nvls_efficiency;
  return cluster;
}

TEST_CASE("a GPU cluster's collectives take NCCL's fastest algorithm and protocol", "[collectives][nccl]") {
  const ClusterSpec cluster = h100_cluster();
  const CollectiveModel model(cluster);
  const CommGroup node = placement(8, 8, 1);
  auto fastest = [&](OpClass op, Bytes bytes, const CommGroup& g, NcclAlgorithm algorithm) {
    double best = 1e30;
    for (NcclProtocol p : {NcclProtocol::ll, NcclProtocol::ll128, NcclProtocol::simple}) {
      best = std::min(best, nccl_seconds(op, algorithm, p, bytes, g));
    }
    return best;
  };
  // Small messages go LL, large ones Simple: the protocol switch a single line cannot follow.
  CHECK(model.time(OpClass::allreduce, 8, node).seconds ==
        Approx(nccl_seconds(OpClass::allreduce, NcclAlgorithm::ring, NcclProtocol::ll, 8, node)));
  CHECK(model.time(OpClass::allreduce, Bytes{8} << 30, node).seconds ==
        Approx(nccl_seconds(OpClass::allreduce, NcclAlgorithm::ring, NcclProtocol::simple, Bytes{8} << 30, node)));
  // At 1,024 GPUs a 1 GiB all-reduce runs as a tree: the ring's 2,046 steps cost more than the
  // tree's lower bandwidth.
  const CommGroup wide = placement(1024, 8, 128);
  const double tree = fastest(OpClass::allreduce, 1 << 30, wide, NcclAlgorithm::tree);
  const double ring = fastest(OpClass::allreduce, 1 << 30, wide, NcclAlgorithm::ring);
  CHECK(tree < ring);
  const CollectiveTime chosen = model.time(OpClass::allreduce, 1 << 30, wide);
  CHECK(chosen.algorithm == CollectiveAlgorithm::tree);
  CHECK(chosen.seconds == Approx(tree));
  // On 2 nodes the ring wins: its bandwidth is not cut by the tree's 0.92 and halving.
  CHECK(model.time(OpClass::allreduce, 1 << 30, placement(16, 8, 2)).algorithm == CollectiveAlgorithm::ring);
  // All-to-all and send/recv keep the latency-bandwidth model.
  CHECK(model.time(OpClass::send, 0, placement(2, 1, 2)).seconds == Approx(cluster.network_latency_s));
}

TEST_CASE("NVLink SHARP all-reduces inside a node: the buffer through each link once each way", "[collectives][nccl]") {
  ClusterSpec cluster = h100_cluster(0.609);
  const CollectiveModel model(cluster);
  const CommGroup node = placement(8, 8, 1);
  // 8 GiB: 25 us (NCCL's NVLS latency) + S / (450 GB/s x 0.609), faster than the ring's 2 x 7/8 of S.
  const CollectiveTime large = model.time(OpClass::allreduce, Bytes{8} << 30, node);
  CHECK(large.algorithm == CollectiveAlgorithm::nvls);
  CHECK(large.seconds == Approx(25e-6 + double(Bytes{8} << 30) / (450e9 * 0.609)));
  // Small buffers stay on LL rings; NVLS does not gather, reduce-scatter or cross nodes here, nor
  // run on two GPUs.
  CHECK(model.time(OpClass::allreduce, 1024, node).algorithm == CollectiveAlgorithm::ring);
  CHECK(model.time(OpClass::allgather, Bytes{8} << 30, node).algorithm == CollectiveAlgorithm::ring);
  CHECK(model.time(OpClass::allreduce, Bytes{8} << 30, placement(16, 8, 2)).algorithm != CollectiveAlgorithm::nvls);
  CHECK(model.time(OpClass::allreduce, Bytes{8} << 30, placement(2, 2, 1)).algorithm != CollectiveAlgorithm::nvls);
  // Without NVLink SHARP (an A100 node), forcing it runs the ring.
  cluster.nvls_efficiency = 0.0;
  const CollectiveModel without(cluster);
  CHECK(without.time(OpClass::allreduce, Bytes{8} << 30, node, CollectiveAlgorithm::nvls) ==
        Approx(without.time(OpClass::allreduce, Bytes{8} << 30, node, CollectiveAlgorithm::ring)));
}

TEST_CASE("compute capability from an architecture name", "[collectives][nccl]") {
  CHECK(compute_capability("sm80") == 80);
  CHECK(compute_capability("sm100") == 100);
  CHECK(compute_capability("") == 90);
  CHECK(compute_capability("gfx90a") == 90);
  CHECK(compute_capability("sm") == 90);
}

}  // namespace
}  // namespace weft
