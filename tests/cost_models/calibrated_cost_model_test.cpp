#include <catch2/catch.hpp>

#include <limits>
#include <memory>

#include "cost_models/calibrated_cost_model.hpp"
#include "cost_models/cluster_cost_model.hpp"
#include "cost_models/comm_group.hpp"

namespace weft {
namespace {

OpWork gemm(std::int64_t m, std::int64_t n, std::int64_t k, Dtype dtype = Dtype::bf16, Kernel layout = Kernel::any) {
  OpWork work;
  work.op_class = OpClass::gemm;
  work.dtype = dtype;
  work.kernel = layout;
  work.shape = {m, n, k};
  work.flops = 2.0 * static_cast<double>(m * n * k);
  return work;
}

CalibratedCostModel example_model() {
  CalibratedCostModel model("test-device");
  model.set_peak_flops(Dtype::bf16, 1e12);
  model.set_memory_bandwidth(Dtype::bf16, 1e11);
  // Efficiency 0.5 at m = 64 and 0.8 at m = 4096 (n, k single points).
  model.set_gemm(Dtype::bf16, {.grid = LogGridTable({{64, 4096}, {128}, {128}}, {0.5, 0.8})});
  model.set_attention(OpClass::attention_fwd, Dtype::bf16, true, LogGridTable({{8}, {1024}, {64}}, {0.4}));
  model.set_memory_bound(Dtype::bf16, LogGridTable({{1e3, 1e6}}, {0.1, 0.6}));
  model.set_communication(OpClass::allreduce, 8, 8, AlphaBeta{10e-6, 1.0 / 50e9});  // inside one node
  return model;
}

TEST_CASE("nominal FLOPs follow the shapes", "[cost_models][calibration]") {
  const std::vector<std::int64_t> g = {3, 5, 7};
  CHECK(nominal_flops(OpClass::gemm, g) == 210.0);
  // 4 b h q k d = 4 * 2 * 8 * 128 * 256 * 64; causal halves it; the backward pass is 2.5 times.
  const std::vector<std::int64_t> a = {2, 8, 128, 256, 64, 1};
  CHECK(nominal_flops(OpClass::attention_fwd, a) == 4.0 * 2 * 8 * 128 * 256 * 64 / 2);
  CHECK(nominal_flops(OpClass::attention_bwd, a) == 2.5 * 4.0 * 2 * 8 * 128 * 256 * 64 / 2);
}

TEST_CASE("the calibrated model divides nominal work by fitted efficiency x reference peak",
          "[cost_models][calibration]") {
  const CalibratedCostModel model = example_model();
  // 2 * 64 * 128 * 128 FLOPs at 0.5 x 1 TFLOP/s.
  CHECK(model.compute_duration(gemm(64, 128, 128)) == std::llround(2.0 * 64 * 128 * 128 / 0.5e12 * 1e9));
  // m = 512 lies halfway between 64 and 4096 in the logarithm: efficiency 0.65.
  CHECK(*model.compute_duration(gemm(512, 128, 128)) == std::llround(2.0 * 512 * 128 * 128 / 0.65e12 * 1e9));
  // Attention point: batch x heads = 8, sqrt(512 x 2048) = 1024, head_dim 64 -> efficiency 0.4.
  OpWork attention;
  attention.op_class = OpClass::attention_fwd;
  attention.shape = {1, 8, 512, 2048, 64, 1};
  CHECK(*model.compute_duration(attention) == std::llround(4.0 * 8 * 512 * 2048 * 64 / 2 / 0.4e12 * 1e9));
  // A norm moving 1e6 bytes at 0.6 x 100 GB/s.
  OpWork norm;
  norm.op_class = OpClass::norm;
  norm.memory_bytes = 1'000'000;
  CHECK(*model.compute_duration(norm) == std::llround(1e6 / 0.6e11 * 1e9));
  // 10 us + 1 MB at 50 GB/s.
  CHECK(*model.communication_duration(OpClass::allreduce, 1'000'000, 8, 8) == 10'000 + 20'000);
}

TEST_CASE("a measured GEMM shape costs what it measured, others scale the grid by their layout's factor",
          "[cost_models][calibration]") {
  CalibratedCostModel model("test-device");
  model.set_peak_flops(Dtype::bf16, 1e12);
  GemmEfficiency gemm_model;
  gemm_model.grid = LogGridTable({{64, 4096}, {128}, {128}}, {0.5, 0.8});
  gemm_model.grid_layout = Kernel::nn;
  gemm_model.layout_factors = {{Kernel::tn, 0.9}};
  gemm_model.points = {{{Kernel::tn, 512, 128, 128}, 0.3}};
  model.set_gemm(Dtype::bf16, gemm_model);
  const auto flops_512 = 2.0 * 512 * 128 * 128;
  // The grid's own layout, and a layout without a factor: 0.65 at m = 512 (halfway in the logarithm).
  CHECK(*model.compute_duration(gemm(512, 128, 128, Dtype::bf16, Kernel::nn)) ==
        std::llround(flops_512 / 0.65e12 * 1e9));
  CHECK(*model.compute_duration(gemm(512, 128, 128, Dtype::bf16, Kernel::nt)) ==
        std::llround(flops_512 / 0.65e12 * 1e9));
  // The measured point, exactly; the same layout elsewhere: 0.9 x the grid.
  CHECK(*model.compute_duration(gemm(512, 128, 128, Dtype::bf16, Kernel::tn)) ==
        std::llround(flops_512 / 0.3e12 * 1e9));
  CHECK(*model.compute_duration(gemm(64, 128, 128, Dtype::bf16, Kernel::tn)) ==
        std::llround(2.0 * 64 * 128 * 128 / (0.9 * 0.5e12) * 1e9));
}

TEST_CASE("an op's own kernel table comes first, then the generic one", "[cost_models][calibration]") {
  CalibratedCostModel model = example_model();
  model.set_attention(OpClass::attention_fwd, Dtype::bf16, true, LogGridTable({{8}, {1024}, {64}}, {0.2}),
                      Kernel::cudnn);
  OpWork attention;
  attention.op_class = OpClass::attention_fwd;
  attention.shape = {1, 8, 1024, 1024, 64, 1};
  const double flops = 4.0 * 8 * 1024 * 1024 * 64 / 2;
  attention.kernel = Kernel::cudnn;
  CHECK(*model.compute_duration(attention) == std::llround(flops / 0.2e12 * 1e9));
  attention.kernel = Kernel::flash2;  // no table of its own: the backend's generic one (0.4)
  CHECK(*model.compute_duration(attention) == std::llround(flops / 0.4e12 * 1e9));

  // A layernorm over 4096 x 1024 at 0.5 of 100 GB/s from its kernel table; an add of the same bytes
  // from the bytes curve (0.6 at 1e6 bytes and beyond).
  model.set_memory_kernel(Kernel::layernorm_fwd, Dtype::bf16, LogGridTable({{4096}, {1024}}, {0.5}));
  OpWork norm;
  norm.op_class = OpClass::norm;
  norm.kernel = Kernel::layernorm_fwd;
  norm.memory_bytes = 2 * 4096 * 1024 * 2;
  norm.shape = {4096, 1024};
  CHECK(*model.compute_duration(norm) == std::llround(16.0 * 1024 * 1024 / 0.5e11 * 1e9));
  norm.kernel = Kernel::add;
  CHECK(*model.compute_duration(norm) == std::llround(16.0 * 1024 * 1024 / 0.6e11 * 1e9));
}

TEST_CASE("fp16 ops use a profile's bf16 tables when it measured no fp16", "[cost_models][calibration]") {
  const CalibratedCostModel model = example_model();
  CHECK(model.compute_duration(gemm(64, 128, 128, Dtype::fp16)) == model.compute_duration(gemm(64, 128, 128)));
  CalibratedCostModel both = example_model();
  both.set_peak_flops(Dtype::fp16, 2e12);  // an fp16 measurement of its own: no borrowing
  CHECK_FALSE(both.compute_duration(gemm(64, 128, 128, Dtype::fp16)));
}

TEST_CASE("the calibrated model leaves uncovered ops to the default rules", "[cost_models][calibration]") {
  const CalibratedCostModel model = example_model();
  CHECK_FALSE(model.compute_duration(gemm(64, 128, 128, Dtype::fp32)));
  OpWork non_causal;
  non_causal.op_class = OpClass::attention_fwd;
  non_causal.shape = {1, 8, 512, 512, 64, 0};
  CHECK_FALSE(model.compute_duration(non_causal));
  CHECK_FALSE(model.communication_duration(OpClass::allreduce, 1000, 4, 4));
  CHECK_FALSE(model.communication_duration(OpClass::allgather, 1000, 8, 8));
}

TEST_CASE("a communication fit of several regimes prices each size by its own line", "[cost_models][calibration]") {
  CalibratedCostModel model;
  // Up to 64 KiB: 5 us + bytes / 10 GB/s; beyond: 50 us + bytes / 100 GB/s.
  model.set_communication(
      OpClass::allgather, 4, 4,
      CommunicationFit({{65536, {5e-6, 1e-10}}, {std::numeric_limits<Bytes>::max(), {50e-6, 1e-11}}}));
  CHECK(model.communication_duration(OpClass::allgather, 65536, 4, 4) == std::llround((5e-6 + 65536e-10) * 1e9));
  CHECK(model.communication_duration(OpClass::allgather, 1 << 20, 4, 4) ==
        std::llround((50e-6 + double(1 << 20) * 1e-11) * 1e9));
}

TEST_CASE("a fit measured inside a node does not price a group across nodes", "[cost_models][calibration]") {
  const CalibratedCostModel model = example_model();
  // Eight ranks, one per node (a DP group of TP8 ranks), and two nodes of four.
  CHECK_FALSE(model.communication_duration(OpClass::allreduce, 1'000'000, 8, 1));
  CHECK_FALSE(model.communication_duration(OpClass::allreduce, 1'000'000, 8, 4));
  CHECK(model.measured_placement(8, 8));
  CHECK_FALSE(model.measured_placement(8, 1));
}

TEST_CASE("a cluster's calibration takes precedence over its roofline and collective model",
          "[cost_models][calibration]") {
  ClusterSpec cluster;
  cluster.gpu.name = "test-device";
  cluster.gpu.peak_flops[static_cast<std::size_t>(Dtype::bf16)] = 1e15;
  cluster.gpu.peak_flops[static_cast<std::size_t>(Dtype::fp32)] = 1e15;
  cluster.gpus = 8;
  cluster.nvlink_bandwidth = 1e11;
  cluster.nics_per_node = 1;
  cluster.nic_bandwidth = 1e10;
  const OpWork g = gemm(64, 128, 128);
  const TimeNs roofline = ClusterCostModel(cluster).duration(g, cluster.gpu);
  CHECK(roofline == std::llround(2.0 * 64 * 128 * 128 / 1e15 * 1e9));
  cluster.calibration = std::make_shared<CalibratedCostModel>(example_model());
  ClusterCostModel calibrated(cluster);
  CHECK(calibrated.duration(g, cluster.gpu) == *example_model().compute_duration(g));
  // An fp32 GEMM is not in the profile: the roofline again.
  CHECK(calibrated.duration(gemm(64, 128, 128, Dtype::fp32), cluster.gpu) == roofline);
  std::vector<std::int64_t> ranks = {0, 1, 2, 3, 4, 5, 6, 7};
  OpWork reduce;
  reduce.op_class = OpClass::allreduce;
  reduce.network_bytes = 1'000'000;
  reduce.comm_group = calibrated.add_group(make_comm_group(CommGroupKind::dp, ranks, cluster));
  CHECK(calibrated.duration(reduce, cluster.gpu) == 30'000);
  CHECK(calibrated.placements_without_calibration().empty());
}

TEST_CASE("a group across nodes is costed by the collective model and named as unmeasured",
          "[cost_models][calibration]") {
  ClusterSpec cluster;
  cluster.gpu.name = "test-device";
  cluster.gpus = 64;
  cluster.gpus_per_node = 8;
  cluster.nvlink_bandwidth = 1e11;
  cluster.nics_per_node = 1;
  cluster.nic_bandwidth = 1e10;
  const std::vector<std::int64_t> strided = {0, 8, 16, 24, 32, 40, 48, 56};  // one rank per node
  OpWork reduce;
  reduce.op_class = OpClass::allreduce;
  reduce.network_bytes = 1'000'000;
  const TimeNs modelled = [&] {
    ClusterCostModel plain(cluster);
    reduce.comm_group = plain.add_group(make_comm_group(CommGroupKind::dp, strided, cluster));
    return plain.duration(reduce, cluster.gpu);
  }();
  cluster.calibration = std::make_shared<CalibratedCostModel>(example_model());
  ClusterCostModel calibrated(cluster);
  reduce.comm_group = calibrated.add_group(make_comm_group(CommGroupKind::dp, strided, cluster));
  // Over the 10 GB/s NIC, not the profile's 50 GB/s of eight ranks inside a node.
  CHECK(calibrated.duration(reduce, cluster.gpu) == modelled);
  CHECK(modelled > 100'000);
  const std::vector<CommGroup> missing = calibrated.placements_without_calibration();
  REQUIRE(missing.size() == 1);
  CHECK(missing[0].size == 8);
  CHECK(missing[0].ranks_per_node == 1);
  CHECK(missing[0].kind == CommGroupKind::dp);
}

}  // namespace
}  // namespace weft
