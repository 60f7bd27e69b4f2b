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

TEST_CASE("measurement files round-trip", "[calibration]") {
  MeasurementSet set;
  set.backend = "cuda";
  set.device = "gpu x";
  set.libraries = {{"nccl", "22809"}};
  set.ranks = 4;
  set.measurements.push_back(
      {OpClass::attention_bwd, Dtype::fp16, {1, 8, 512, 512, 64, 1}, MeasurementSplit::holdout, {3.0, 1.0, 2.0}});
  set.measurements.push_back({OpClass::send, Dtype::bf16, {4096, 2}, MeasurementSplit::fit, {5.0}});
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

TEST_CASE("bad measurement files name the JSON path", "[calibration]") {
  CHECK_THROWS_WITH(read(R"({"format": "weft-profile"})"), Catch::Contains("format: expected \"weft-measurements\""));
  CHECK_THROWS_WITH(read(file_with("[]")),
                    Catch::Contains("measurements: expected at least one measurement (the suite is empty)"));
  CHECK_THROWS_WITH(
      read(file_with(R"([{"op": "gemm", "dtype": "bf16", "shape": {"m": 1, "n": 2}, "samples_ns": [1]}])")),
      Catch::Contains("measurements[0].shape: missing required field 'k'"));
  CHECK_THROWS_WITH(read(file_with(R"([{"op": "norm", "dtype": "bf16", "shape": {}, "samples_ns": [1]}])")),
                    Catch::Contains("measurements[0].op: 'norm' is not a measured op"));
  CHECK_THROWS_WITH(
      read(file_with(R"([{"op": "send", "dtype": "bf16", "shape": {"bytes": 1, "group_size": 2}, "samples_ns": []}])")),
      Catch::Contains("measurements[0].samples_ns: expected at least one sample"));
}

}  // namespace
}  // namespace weft
