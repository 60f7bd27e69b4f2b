#include "cost_models/device_spec.hpp"

#include <catch2/catch.hpp>

#include "simulator/core/scenario_library.hpp"

namespace weft {
namespace {

using Catch::Matchers::Contains;

DeviceSpec parse(const char* text) {
  const JsonDocument document = JsonDocument::parse_text(text, "spec.json");
  return load_device_spec(document.root());
}

TEST_CASE("a spec converts its units to SI", "[cost][spec]") {
  const DeviceSpec spec = parse(R"({"name": "x", "kind": "gpu", "peak_tflops": {"bf16": 989.4, "fp32": 66.9},
                                    "memory_bandwidth_GBps": 3350, "network_bandwidth_GBps": 450, "memory_MiB": 1024})");
  CHECK(spec.peak(Dtype::bf16) == Approx(989.4e12));
  CHECK(spec.peak(Dtype::fp32) == Approx(66.9e12));
  CHECK(spec.peak(Dtype::fp8) == 0.0);
  CHECK(spec.memory_bandwidth == Approx(3.35e12));
  CHECK(spec.network_bandwidth == Approx(450e9));
  CHECK(spec.memory_capacity == Bytes{1} << 30);
}

TEST_CASE("every bundled device spec loads by name", "[cost][spec]") {
  const auto names = ScenarioLibrary::names("clusters/devices");
  REQUIRE(names.size() >= 5);
  for (const std::string& name : names) {
    const auto document = JsonDocument::parse_text("\"" + name + "\"", "name");
    const DeviceSpec spec = load_device_spec(document.root());
    CHECK(spec.name == name);
  }
  const auto h100 = JsonDocument::parse_text(R"("h100-sxm")", "name");
  const DeviceSpec spec = load_device_spec(h100.root());
  // shared/reference/README.md: 81,559 MiB of HBM; datasheet 989 TFLOP/s bf16 dense, 3.35 TB/s.
  CHECK(spec.memory_capacity == Bytes{81559} * kBytesPerMiB);
  CHECK(spec.peak(Dtype::bf16) == Approx(989e12).epsilon(0.001));
  CHECK(spec.memory_bandwidth == Approx(3.35e12));
  // The whitepapers' SM counts: 132 on H100 SXM5, 108 on A100.
  CHECK(spec.streaming_multiprocessors == 132);
  CHECK(parse(R"("a100-sxm-80gb")").streaming_multiprocessors == 108);
  // NCCL's collectives hold 24 of them on both inside a node, 16 across nodes (the sources in the specs).
  CHECK(spec.collective_sms == 24);
  CHECK(spec.collective_sms_across_nodes == 16);
  CHECK(parse(R"("a100-sxm-80gb")").collective_sms == 24);
  CHECK(parse(R"("a40")").collective_sms == 0);  // no source: not modelled
}

TEST_CASE("a GPU is known by its spec name and by the names its driver reports", "[cost][spec]") {
  const DeviceSpec h100 = parse(R"("h100-sxm")");
  CHECK(h100.is("h100-sxm"));
  CHECK(h100.is("NVIDIA H100 80GB HBM3"));
  CHECK_FALSE(h100.is("NVIDIA H200"));
  CHECK_FALSE(parse(R"("h200")").is("NVIDIA H100 80GB HBM3"));
}

TEST_CASE("bad specs are rejected with their path", "[cost][spec][errors]") {
  CHECK_THROWS_WITH(parse(R"("no-such-gpu")"),
                    Contains("unknown device spec 'no-such-gpu' (known: ") && Contains("h100-sxm"));
  CHECK_THROWS_WITH(parse(R"("../h100-sxm")"), Contains("unknown device spec"));
  CHECK_THROWS_WITH(parse(R"({"name": "x", "kind": "tpu"})"), Contains("kind: 'tpu' is not one of gpu, cpu or link"));
  CHECK_THROWS_WITH(parse(R"({"name": "x", "kind": "gpu", "peak_tflops": {"bf17": 1}})"),
                    Contains("peak_tflops.bf17: unknown dtype"));
  CHECK_THROWS_WITH(parse(R"({"name": "x", "kind": "gpu", "sms": 0})"),
                    Contains("sms: expected an integer from 1 to 4096, got 0"));
  CHECK_THROWS_WITH(parse(R"({"name": "x", "kind": "gpu", "collective_sms": 24})"),
                    Contains("collective_sms: needs \"sms\", the SMs they are a part of"));
  CHECK_THROWS_WITH(parse(R"({"name": "x", "kind": "gpu", "sms": 108, "collective_sms": 108})"),
                    Contains("collective_sms: expected an integer from 0 to 107, got 108"));
  CHECK_THROWS_WITH(parse(R"({"name": "x", "kind": "gpu", "sms": 108, "collective_sms_across_nodes": -1})"),
                    Contains("collective_sms_across_nodes: expected an integer from 0 to 107, got -1"));
  CHECK_THROWS_WITH(parse(R"({"name": "x", "kind": "link", "memory_MiB": 10})"),
                    Contains("memory_MiB: a link device has no memory"));
  CHECK_THROWS_WITH(parse(R"({"name": "x", "kind": "gpu", "memory_bandwidth_GBps": -1})"),
                    Contains("memory_bandwidth_GBps: expected a number >= 0"));
  CHECK_THROWS_WITH(parse(R"(42)"), Contains("expected a device spec name or object"));
  CHECK_THROWS_WITH(parse(R"({"name": "x", "kind": "gpu", "reported_names": [""]})"),
                    Contains("reported_names[0]: expected a non-empty name"));
  CHECK_THROWS_WITH(parse(R"({"name": "x", "kind": "gpu", "reported_names": "NVIDIA H100"})"),
                    Contains("reported_names: expected an array"));
}

}  // namespace
}  // namespace weft
