#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "cost_models/roofline_cost_model.hpp"
#include "simulator/graph/graph_builder.hpp"

namespace weft::test {

// A GraphBuilder over devices whose every capacity is 10^9 per second, so that under the default
// roofline rule (efficiency 1, no launch overhead) one FLOP, one memory byte or one network byte
// takes exactly one nanosecond: timelines can be computed by hand.
class UnitPlatform {
 public:
  // With `host_issue_ns`, a host issues each of every GPU's streams, an op in that many ns, an
  // elementwise op in half as many (a kernel's launch costs the host less than a library call);
  // with `kernel_gap_ns`, an op on those streams starts no earlier than that after the one before.
  explicit UnitPlatform(TimeNs host_issue_ns = 0, TimeNs kernel_gap_ns = 0);

  // A GPU with in_order streams "compute" and "comm"; capacity 0 means no memory limit.
  DeviceId add_gpu(const std::string& name, Bytes memory_capacity = 0);
  // A link with one first_ready stream.
  DeviceId add_link(const std::string& name);

  StreamId compute(DeviceId gpu) const { return streams_.at(gpu.value()).front(); }
  StreamId comm(DeviceId gpu) const { return streams_.at(gpu.value()).back(); }

  // An op of `op_class` lasting `ns` nanoseconds on `stream` (FLOPs for compute classes, network
  // bytes for communication classes).
  OpId op(std::string_view name, StreamId stream, TimeNs ns, OpClass op_class = OpClass::gemm);
  TensorId tensor(std::string_view name, DeviceId device, Bytes bytes, TensorKind kind = TensorKind::activation);
  // `from` produces a fresh tensor that `to` consumes.
  TensorId connect(OpId from, OpId to, Bytes bytes = 0);

  GraphBuilder& builder() { return builder_; }
  Graph build() { return std::move(builder_).build(); }
  const RooflineCostModel& cost_model() const { return cost_model_; }

 private:
  GraphBuilder builder_;
  DeviceSpecId gpu_spec_;
  DeviceSpecId link_spec_;
  std::vector<std::vector<StreamId>> streams_;  // by device id
  RooflineCostModel cost_model_;
  int tensor_counter_ = 0;
  bool host_issued_ = false;
};

}  // namespace weft::test
