#include "cost_models/roofline_cost_model.hpp"

#include <catch2/catch.hpp>

#include "simulator/core/input_error.hpp"

namespace weft {
namespace {

using Catch::Matchers::Contains;

// 100 TFLOP/s in bf16, 1 TB/s of memory, 100 GB/s of network: round numbers for hand checks.
DeviceSpec round_gpu() {
  DeviceSpec spec;
  spec.name = "round";
  spec.peak_flops[static_cast<std::size_t>(Dtype::bf16)] = 100e12;
  spec.memory_bandwidth = 1e12;
  spec.network_bandwidth = 100e9;
  return spec;
}

OpWork work(OpClass op_class, double flops, Bytes memory, Bytes network = 0) {
  OpWork w;
  w.op_class = op_class;
  w.flops = flops;
  w.memory_bytes = memory;
  w.network_bytes = network;
  return w;
}

TEST_CASE("the roofline takes the slowest of compute, memory and network", "[cost]") {
  const RooflineCostModel model;
  // 2e12 FLOP / 100e12 FLOP/s = 20 ms; 3e9 B / 1e12 B/s = 3 ms.
  CHECK(model.duration(work(OpClass::gemm, 2e12, 3'000'000'000), round_gpu()) == 20'000'000);
  // 1e9 FLOP = 10 us; 5e9 B = 5 ms: memory-bound.
  CHECK(model.duration(work(OpClass::elementwise, 1e9, 5'000'000'000), round_gpu()) == 5'000'000);
  // 1e9 B over 100 GB/s = 10 ms.
  CHECK(model.duration(work(OpClass::allreduce, 0, 0, 1'000'000'000), round_gpu()) == 10'000'000);
  CHECK(model.duration(work(OpClass::other, 0, 0), round_gpu()) == 0);
}

TEST_CASE("efficiencies divide capacities and launch overhead is added", "[cost]") {
  RooflineRule rule;
  rule.flops_efficiency = 0.5;
  rule.memory_efficiency = 0.25;
  rule.launch_overhead_ns = 4'000;
  const RooflineCostModel model(rule);
  // 2e12 FLOP at 50 TFLOP/s = 40 ms, plus 4 us.
  CHECK(model.duration(work(OpClass::gemm, 2e12, 0), round_gpu()) == 40'004'000);
  // 1e9 B at 250 GB/s = 4 ms, plus 4 us.
  CHECK(model.duration(work(OpClass::norm, 0, 1'000'000'000), round_gpu()) == 4'004'000);
}

TEST_CASE("durations are rounded to the nearest nanosecond once", "[cost]") {
  const RooflineCostModel model;
  // 150,000 FLOP at 100 TFLOP/s = 1.5 ns -> 2; 140,000 FLOP = 1.4 ns -> 1.
  CHECK(model.duration(work(OpClass::gemm, 150'000, 0), round_gpu()) == 2);
  CHECK(model.duration(work(OpClass::gemm, 140'000, 0), round_gpu()) == 1);
}

TEST_CASE("per-class rules and custom rules override the default", "[cost]") {
  RooflineCostModel model;
  RooflineRule fixed;
  fixed.fixed_ns = 1234;
  model.set_rule(OpClass::allreduce, fixed);
  model.set_custom_rule(OpClass::gemm,
                        [](const OpWork& w, const DeviceSpec&) { return static_cast<TimeNs>(w.flops) * 2; });
  CHECK(model.duration(work(OpClass::allreduce, 0, 0, 1'000'000'000), round_gpu()) == 1234);
  CHECK(model.duration(work(OpClass::gemm, 500, 0), round_gpu()) == 1000);
  // 1e6 B at 1 TB/s = 1 us.
  CHECK(model.duration(work(OpClass::elementwise, 0, 1'000'000), round_gpu()) == 1'000);
}

TEST_CASE("a device without the needed capacity is an error", "[cost][errors]") {
  const RooflineCostModel model;
  OpWork fp8 = work(OpClass::gemm, 1e9, 0);
  fp8.dtype = Dtype::fp8;
  CHECK_THROWS_WITH(model.duration(fp8, round_gpu()), Contains("has no fp8 peak FLOP/s"));
  DeviceSpec no_network = round_gpu();
  no_network.network_bandwidth = 0;
  CHECK_THROWS_WITH(model.duration(work(OpClass::send, 0, 0, 10), no_network), Contains("has no network bandwidth"));
  RooflineRule bad;
  bad.flops_efficiency = 1.5;
  CHECK_THROWS_AS(RooflineCostModel(bad), InputError);
}

TEST_CASE("cost rules are read from JSON and class rules start from the default", "[cost][json]") {
  const auto document = JsonDocument::parse_text(R"({
    "default": {"efficiency": {"flops": 0.5, "memory": 0.5}, "launch_overhead_ns": 100},
    "classes": {"gemm": {"efficiency": {"flops": 0.8}}, "allreduce": {"fixed_ns": 7}},
    "host_issue_ns": 9000, "kernel_gap_ns": 1400
  })",
                                                 "cost.json");
  const RooflineCostModel model = RooflineCostModel::from_json(document.root());
  CHECK(model.rule(OpClass::gemm).flops_efficiency == 0.8);
  CHECK(model.rule(OpClass::gemm).memory_efficiency == 0.5);
  CHECK(model.rule(OpClass::gemm).launch_overhead_ns == 100);
  CHECK(model.rule(OpClass::norm).flops_efficiency == 0.5);
  CHECK(model.duration(work(OpClass::allreduce, 0, 0, 100), round_gpu()) == 7);
  // 8e12 FLOP at 0.8 x 100 TFLOP/s = 100 ms, plus 100 ns.
  CHECK(model.duration(work(OpClass::gemm, 8e12, 0), round_gpu()) == 100'000'100);
  CHECK(model.host_issue_ns(OpClass::norm, round_gpu()) == 9000);
  CHECK(model.kernel_gap_ns(round_gpu()) == 1400);
}

TEST_CASE("bad cost JSON names the path", "[cost][json][errors]") {
  auto load = [](const char* text) {
    return RooflineCostModel::from_json(JsonDocument::parse_text(text, "cost.json").root());
  };
  CHECK_THROWS_WITH(load(R"({"classes": {"gemmm": {}}})"), Contains("classes.gemmm: unknown op class"));
  CHECK_THROWS_WITH(load(R"({"default": {"efficiency": {"flops": 2}}})"),
                    Contains("default.efficiency.flops: expected an efficiency in (0, 1]"));
  CHECK_THROWS_WITH(load(R"({"default": {"launch_overhead_ns": -1}})"),
                    Contains("default.launch_overhead_ns: expected an integer >= 0"));
  CHECK_THROWS_WITH(load(R"({"defaults": {}})"), Contains("defaults: unknown field"));
  CHECK_THROWS_WITH(load(R"({"kernel_gap_ns": 1.5})"), Contains("kernel_gap_ns: expected an integer"));
}

}  // namespace
}  // namespace weft
