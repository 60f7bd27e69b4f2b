#include "cost_models/cluster_spec.hpp"

#include <algorithm>

#include <catch2/catch.hpp>

#include "cost_models/cluster_cost_model.hpp"

namespace weft {
namespace {

using Catch::Matchers::Contains;

ClusterSpec cluster_from(const std::string& text) {
  const JsonDocument document = JsonDocument::parse_text(text, "cluster.json");
  return load_cluster_spec(document.root());
}

std::string cluster_error(const std::string& text) {
  try {
    cluster_from(text);
  } catch (const InputError& error) {
    return error.what();
  }
  return "no error";
}

// 8 nodes of H100, nodes 2..3 of A100 80GB and node 6 of A100 40GB.
const std::string kMixed = R"({"base": "dgx-h100", "gpus": 64, "node_groups": [
    {"first_node": 2, "nodes": 2, "gpu": "a100-sxm-80gb"},
    {"first_node": 6, "nodes": 1, "gpu": "a100-sxm-40gb", "calibration": "none"}]})";

TEST_CASE("node groups give ranges of nodes their own GPU type", "[cluster][mixed]") {
  const ClusterSpec cluster = cluster_from(kMixed);
  REQUIRE(cluster.node_groups.size() == 2);
  CHECK(cluster.node_group_of(15) == -1);
  CHECK(cluster.node_group_of(16) == 0);
  CHECK(cluster.node_group_of(31) == 0);
  CHECK(cluster.node_group_of(32) == -1);
  CHECK(cluster.node_group_of(48) == 1);
  CHECK(cluster.gpu_of_group(0).name == "a100-sxm-80gb");
  CHECK(cluster.gpu_of_group(-1).name == "h100-sxm");
  // Each type is costed by its own bundled profile; "none" leaves the group to the roofline.
  REQUIRE(cluster.calibration_for(cluster.gpu) != nullptr);
  REQUIRE(cluster.calibration_for(cluster.node_groups[0].gpu) != nullptr);
  CHECK(cluster.node_groups[0].gpu.is(cluster.calibration_for(cluster.node_groups[0].gpu)->device()));
  CHECK(cluster.calibration_for(cluster.node_groups[1].gpu) == nullptr);
  // The mean peak of the 64 GPUs: 40 H100, 16 A100 80GB, 8 A100 40GB.
  const ClusterSpec h100 = cluster_from(R"({"base": "dgx-h100", "gpus": 8})");
  const double expected = (40 * h100.gpu.peak(Dtype::bf16) + 16 * cluster.node_groups[0].gpu.peak(Dtype::bf16) +
                           8 * cluster.node_groups[1].gpu.peak(Dtype::bf16)) /
                          64;
  CHECK(cluster.mean_peak(Dtype::bf16, 64) == Approx(expected));
  CHECK(cluster.largest_memory() == std::max({h100.gpu.memory_capacity, cluster.node_groups[0].gpu.memory_capacity,
                                              cluster.node_groups[1].gpu.memory_capacity}));
}

TEST_CASE("a GPU type's ops are costed by its own profile", "[cluster][mixed]") {
  const ClusterSpec mixed = cluster_from(kMixed);
  const ClusterSpec a100 = cluster_from(R"({"base": "dgx-a100-superpod", "gpus": 8})");
  OpWork gemm;
  gemm.op_class = OpClass::gemm;
  gemm.dtype = Dtype::bf16;
  gemm.shape = {8192, 8192, 8192};
  gemm.flops = 2.0 * 8192 * 8192 * 8192;
  gemm.memory_bytes = 3 * 8192 * 8192 * 2;
  const ClusterCostModel on_mixed(mixed);
  const ClusterCostModel on_a100(a100);
  CHECK(on_mixed.duration(gemm, mixed.node_groups[0].gpu) == on_a100.duration(gemm, a100.gpu));
  CHECK(on_mixed.duration(gemm, mixed.gpu) < on_mixed.duration(gemm, mixed.node_groups[0].gpu));
}

TEST_CASE("bad node groups name their path", "[cluster][mixed][errors]") {
  auto with = [](const std::string& groups) {
    return R"({"base": "dgx-h100", "gpus": 64, "node_groups": )" + groups + "}";
  };
  CHECK_THAT(cluster_error(with(R"([{"first_node": 8, "nodes": 1, "gpu": "a100-sxm-80gb"}])")),
             Contains("node_groups[0].first_node"));
  CHECK_THAT(cluster_error(with(R"([{"first_node": 6, "nodes": 3, "gpu": "a100-sxm-80gb"}])")),
             Contains("node_groups[0].nodes"));
  CHECK_THAT(cluster_error(with(R"([{"first_node": 0, "nodes": 4, "gpu": "a100-sxm-80gb"},
                                {"first_node": 3, "nodes": 1, "gpu": "a100-sxm-40gb"}])")),
             Contains("node_groups[1].first_node") && Contains("overlap"));
  CHECK_THAT(cluster_error(with(R"([{"first_node": 0, "nodes": 1, "gpu": "nvlink4-link"}])")),
             Contains("node_groups[0].gpu"));
  CHECK_THAT(
      cluster_error(with(R"([{"first_node": 0, "nodes": 1, "gpu": "a100-sxm-80gb", "calibration": "h100-sxm"}])")),
      Contains("node_groups[0].calibration"));
  CHECK_THAT(cluster_error(with(R"([{"first_node": 0, "nodes": 1, "gpu": "no-such-gpu"}])")), Contains("no-such-gpu"));
}

}  // namespace
}  // namespace weft
