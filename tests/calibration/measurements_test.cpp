#include <catch2/catch.hpp>

#include "calibration/measurements.hpp"

namespace weft {
namespace {

MeasurementSet read(const std::string& text) {
  const JsonDocument document = JsonDocument::parse_text(text, "test");
  return read_measurements(document.root());
}

std::string file_with(const std::string& measurements) {
  return R"({"format": "weft-measurements", "version": 1, "backend": "cpu", "device": "d", "measurements": )" +
         measurements + "}";
}

// A file of one GEMM measurement and the top-level field `key` of JSON `value`.
std::string one_gemm_and(const std::string& key, const std::string& value) {
  std::string text =
      file_with(R"([{"op": "gemm", "dtype": "bf16", "shape": {"m": 1, "n": 1, "k": 1}, "samples_ns": [1]}])");
  return text.insert(text.size() - 1, ", \"" + key + "\": " + value);
}

TEST_CASE("measurement files round-trip", "[calibration]") {
  MeasurementSet set;
  set.backend = "cuda";
  set.device = "gpu x";
  set.libraries = {{"nccl", "22809"}};
  set.ranks = 4;
  set.measurements.push_back({.op = OpClass::attention_bwd,
                              .dtype = Dtype::fp16,
                              .shape = {1, 8, 512, 512, 64, 1},
                              .split = MeasurementSplit::holdout,
                              .samples_ns = {3.0, 1.0, 2.0}});
  set.measurements.push_back({.op = OpClass::send,
                              .dtype = Dtype::bf16,
                              .shape = {4096, 2},
                              .split = MeasurementSplit::fit,
                              .samples_ns = {5.0}});
  const MeasurementSet back = read(measurements_json(set).dump());
  CHECK(back.backend == "cuda");
  CHECK(back.device == "gpu x");
  CHECK(back.ranks == 4);
  REQUIRE(back.measurements.size() == 2);
  CHECK(back.measurements[0].op == OpClass::attention_bwd);
  CHECK(back.measurements[0].shape == set.measurements[0].shape);
  CHECK(back.measurements[0].split == MeasurementSplit::holdout);
  CHECK(back.measurements[0].median_ns() == 2.0);
  CHECK(back.measurements[0].field("causal") == 1);
  CHECK(back.measurements[1].field("group_size") == 2);
}

TEST_CASE("attention measurements may name fewer key and value heads (grouped-query)", "[calibration]") {
  auto attention = [](const std::string& kv_heads) {
    return file_with(R"([{"op": "attention_fwd", "dtype": "bf16", "kernel": "cudnn", "shape": {"batch": 1, "heads": 8,
                          "queries": 512, "keys": 512, "head_dim": 64, "causal": true)" +
                     kv_heads + R"(}, "samples_ns": [5]}])");
  };
  const MeasurementSet grouped = read(attention(R"(, "kv_heads": 2)"));
  CHECK(grouped.measurements[0].shape == std::vector<std::int64_t>{1, 8, 512, 512, 64, 1, 2});
  CHECK(grouped.measurements[0].field("kv_heads") == 2);
  // As many as the query heads, or none: multi-head, six dimensions.
  for (const std::string& kv_heads : {std::string(R"(, "kv_heads": 8)"), std::string()}) {
    const MeasurementSet multi_head = read(attention(kv_heads));
    CHECK(multi_head.measurements[0].shape.size() == 6);
    CHECK(multi_head.measurements[0].field("kv_heads") == 8);
  }
  const nlohmann::json written = measurements_json(grouped);
  CHECK(written["measurements"][0]["shape"]["kv_heads"] == 2);
  CHECK_FALSE(measurements_json(read(attention("")))["measurements"][0]["shape"].contains("kv_heads"));
  CHECK_THROWS_WITH(read(attention(R"(, "kv_heads": 3)")),
                    Catch::Contains("shape.kv_heads: expected a divisor of heads (8)"));
}

TEST_CASE("measurement files keep kernels, off-grid shapes, labels and sources", "[calibration]") {
  MeasurementSet set;
  set.backend = "cuda";
  set.device = "h100-sxm";
  set.sources = {{"ref", "a measured file"}};
  set.notes = {"converted"};
  set.measurements.push_back({.op = OpClass::gemm,
                              .dtype = Dtype::bf16,
                              .kernel = Kernel::tn,
                              .shape = {6144, 2048, 4096},
                              .grid = false,
                              .samples_ns = {144.0},
                              .source = "ref",
                              .label = "gpt3-1.3b tp1 qkv wgrad"});
  set.measurements.push_back({.op = OpClass::norm,
                              .dtype = Dtype::bf16,
                              .kernel = Kernel::rmsnorm_fwd,
                              .shape = {4096, 2048},
                              .samples_ns = {14.0}});
  set.measurements.push_back({.op = OpClass::optimizer,
                              .dtype = Dtype::fp32,
                              .kernel = Kernel::adamw_fused,
                              .shape = {1000},
                              .samples_ns = {9.0}});
  set.host_issue = {{std::nullopt, {13000.0, 13400.0}, "ref", "torch.matmul of 256 x 256 x 256"},
                    {OpClass::attention_bwd, {30000.0}, "", "cuDNN attention backward"}};
  set.kernel_gap = KernelGapMeasurement{{1300.0, 1500.0, 1400.0}, "", "copies back to back"};
  set.sample_ms = 50;
  const MeasurementSet back = read(measurements_json(set).dump());
  REQUIRE(back.kernel_gap);
  CHECK(back.kernel_gap->samples_ns == set.kernel_gap->samples_ns);
  CHECK(back.kernel_gap->label == "copies back to back");
  MeasurementSet without_gap = set;
  without_gap.kernel_gap.reset();
  CHECK_FALSE(read(measurements_json(without_gap).dump()).kernel_gap);
  REQUIRE(back.host_issue.size() == 2);
  CHECK_FALSE(back.host_issue[0].op);
  CHECK(back.host_issue[0].samples_ns == set.host_issue[0].samples_ns);
  CHECK(back.host_issue[0].source == "ref");
  CHECK(back.host_issue[0].label == set.host_issue[0].label);
  CHECK(back.host_issue[1].op == OpClass::attention_bwd);
  CHECK(back.host_issue[1].samples_ns == std::vector<double>{30000.0});
  CHECK(back.sample_ms == 50);
  REQUIRE(back.measurements.size() == 3);
  CHECK(back.sources == set.sources);
  CHECK(back.notes == set.notes);
  CHECK(back.measurements[0].kernel == Kernel::tn);
  CHECK_FALSE(back.measurements[0].grid);
  CHECK(back.measurements[0].source == "ref");
  CHECK(back.measurements[0].label == "gpt3-1.3b tp1 qkv wgrad");
  CHECK(back.measurements[1].field("rows") == 4096);
  CHECK(back.measurements[1].field("width") == 2048);
  CHECK(back.measurements[2].field("parameters") == 1000);
  CHECK(back.measurements[2].grid);
}

TEST_CASE("a bad host issue measurement names its JSON path", "[calibration][host]") {
  auto with_host = [](const std::string& host) { return one_gemm_and("host_issue", host); };
  CHECK(read(with_host(R"({"samples_ns": [13000]})")).host_issue.at(0).median_ns() == 13000.0);
  const auto listed = read(with_host(R"([{"op": "gemm", "samples_ns": [20000]}, {"samples_ns": [7000]}])")).host_issue;
  REQUIRE(listed.size() == 2);
  CHECK(listed[0].op == OpClass::gemm);
  CHECK_FALSE(listed[1].op);
  CHECK_THROWS_WITH(read(with_host(R"([{"op": "gemm", "samples_ns": [1]}, {"op": "gemm", "samples_ns": [2]}])")),
                    Catch::Contains("host_issue[1]: a second measurement of gemm ops"));
  CHECK_THROWS_WITH(read(with_host(R"([{"samples_ns": [1]}, {"samples_ns": [2]}])")),
                    Catch::Contains("host_issue[1]: a second measurement without an op class"));
  CHECK_THROWS_WITH(read(with_host(R"([{"op": "barrier", "samples_ns": [1]}])")),
                    Catch::Contains("host_issue[0].op: a barrier issues nothing"));
  CHECK_THROWS_WITH(read(with_host(R"([{"op": "matmul", "samples_ns": [1]}])")), Catch::Contains("host_issue[0].op"));
  CHECK_THROWS_WITH(read(with_host("[]")), Catch::Contains("host_issue: expected at least one measurement"));
  CHECK_THROWS_WITH(read(with_host(R"({"samples_ns": []})")),
                    Catch::Contains("host_issue.samples_ns: expected at least one sample"));
  CHECK_THROWS_WITH(read(with_host(R"({"samples_ns": [-1]})")), Catch::Contains("host_issue.samples_ns[0]"));
  CHECK_THROWS_WITH(read(with_host(R"({"samples_ns": [2e7]})")),
                    Catch::Contains("host_issue.samples_ns[0]: expected at most"));
  CHECK_THROWS_WITH(read(with_host(R"({"samples_ns": [1], "source": "nowhere"})")),
                    Catch::Contains("host_issue.source: 'nowhere' is not a key of the file's \"sources\""));
}

TEST_CASE("a bad kernel gap measurement names its JSON path", "[calibration][host]") {
  auto with_gap = [](const std::string& gap) { return one_gemm_and("kernel_gap", gap); };
  CHECK(read(with_gap(R"({"samples_ns": [1200, 1400, 1600], "median_ns": 1})")).kernel_gap->median_ns() == 1400.0);
  CHECK_THROWS_WITH(read(with_gap(R"({"op": "gemm", "samples_ns": [1]})")),
                    Catch::Contains("kernel_gap.op: unknown field"));
  CHECK_THROWS_WITH(read(with_gap(R"([{"samples_ns": [1]}])")), Catch::Contains("kernel_gap: expected an object"));
  CHECK_THROWS_WITH(read(with_gap(R"({"samples_ns": []})")),
                    Catch::Contains("kernel_gap.samples_ns: expected at least one sample"));
  CHECK_THROWS_WITH(read(with_gap(R"({"samples_ns": [-5]})")), Catch::Contains("kernel_gap.samples_ns[0]"));
}

TEST_CASE("bad measurement files name the JSON path", "[calibration]") {
  CHECK_THROWS_WITH(read(R"({"format": "weft-profile"})"), Catch::Contains("format: expected \"weft-measurements\""));
  CHECK_THROWS_WITH(read(file_with("[]")),
                    Catch::Contains("measurements: expected at least one measurement (the suite is empty)"));
  CHECK_THROWS_WITH(
      read(file_with(R"([{"op": "gemm", "dtype": "bf16", "shape": {"m": 1, "n": 2}, "samples_ns": [1]}])")),
      Catch::Contains("measurements[0].shape: missing required field 'k'"));
  CHECK_THROWS_WITH(read(file_with(R"([{"op": "loss", "dtype": "bf16", "shape": {}, "samples_ns": [1]}])")),
                    Catch::Contains("measurements[0].op: 'loss' is not a measured op"));
  CHECK_THROWS_WITH(read(file_with(R"([{"op": "norm", "dtype": "bf16", "shape": {}, "samples_ns": [1]}])")),
                    Catch::Contains("measurements[0]: missing required field 'kernel'"));
  CHECK_THROWS_WITH(
      read(file_with(R"([{"op": "norm", "dtype": "bf16", "kernel": "nt", "shape": {}, "samples_ns": [1]}])")),
      Catch::Contains("measurements[0].kernel: 'nt' is not a kernel of norm ops (expected one of any, layernorm_fwd"));
  CHECK_THROWS_WITH(read(file_with(R"([{"op": "norm", "dtype": "bf16", "kernel": "rmsnorm_fwd",
                                        "shape": {"inputs": 1, "outputs": 1}, "samples_ns": [1]}])")),
                    Catch::Contains("measurements[0].shape.inputs: unknown shape field for norm"));
  CHECK_THROWS_WITH(read(file_with(R"([{"op": "optimizer", "dtype": "bf16", "kernel": "adamw_fused",
                                        "shape": {"parameters": 10}, "samples_ns": [1]}])")),
                    Catch::Contains("measurements[0].dtype: the optimizer step runs on fp32 master weights"));
  CHECK_THROWS_WITH(read(file_with(R"([{"op": "elementwise", "dtype": "bf16", "shape": {"inputs": 1, "outputs": 1},
                                        "grid": false, "samples_ns": [1]}])")),
                    Catch::Contains("measurements[0].grid: only GEMM measurements may lie off the grid"));
  CHECK_THROWS_WITH(read(file_with(R"([{"op": "gemm", "dtype": "bf16", "shape": {"m": 1, "n": 1, "k": 1},
                                        "source": "paper", "samples_ns": [1]}])")),
                    Catch::Contains("measurements[0].source: 'paper' is not a key of the file's \"sources\""));
  CHECK_THROWS_WITH(
      read(file_with(R"([{"op": "send", "dtype": "bf16", "shape": {"bytes": 1, "group_size": 2}, "samples_ns": []}])")),
      Catch::Contains("measurements[0].samples_ns: expected at least one sample"));
}

}  // namespace
}  // namespace weft
