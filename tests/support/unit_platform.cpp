#include "tests/support/unit_platform.hpp"

namespace weft::test {

UnitPlatform::UnitPlatform(TimeNs host_issue_ns, TimeNs kernel_gap_ns)
    : host_issued_(host_issue_ns > 0 || kernel_gap_ns > 0) {
  cost_model_.set_host_issue_ns(host_issue_ns);
  cost_model_.set_kernel_gap_ns(kernel_gap_ns);
  cost_model_.set_host_issue_ns(OpClass::elementwise, host_issue_ns / 2);
  DeviceSpec gpu;
  gpu.name = "unit-gpu";
  gpu.kind = DeviceKind::gpu;
  gpu.peak_flops.fill(1e9);
  gpu.memory_bandwidth = 1e9;
  gpu.network_bandwidth = 1e9;
  gpu_spec_ = builder_.add_device_spec(gpu);
  DeviceSpec link;
  link.name = "unit-link";
  link.kind = DeviceKind::link;
  link.network_bandwidth = 1e9;
  link_spec_ = builder_.add_device_spec(link);
}

DeviceId UnitPlatform::add_gpu(const std::string& name, Bytes memory_capacity) {
  const DeviceId device = builder_.add_device(name, gpu_spec_);
  builder_.set_memory_capacity(device, memory_capacity);
  streams_.push_back({builder_.add_stream(device, "compute", StreamPolicy::in_order, host_issued_),
                      builder_.add_stream(device, "comm", StreamPolicy::in_order, host_issued_)});
  return device;
}

DeviceId UnitPlatform::add_link(const std::string& name) {
  const DeviceId device = builder_.add_device(name, link_spec_);
  streams_.push_back({builder_.add_stream(device, "transfer", StreamPolicy::first_ready)});
  return device;
}

OpId UnitPlatform::op(std::string_view name, StreamId stream, TimeNs ns, OpClass op_class) {
  OpWork work;
  work.op_class = op_class;
  if (category_of(op_class) == OpCategory::communication) {
    work.network_bytes = ns;
  } else {
    work.flops = static_cast<double>(ns);
  }
  return builder_.add_op(name, builder_.intern_work(work), stream);
}

TensorId UnitPlatform::tensor(std::string_view name, DeviceId device, Bytes bytes, TensorKind kind) {
  return builder_.add_tensor(name, device, kind, bytes);
}

TensorId UnitPlatform::connect(OpId from, OpId to, Bytes bytes) {
  const std::string name = "t" + std::to_string(tensor_counter_++);
  // Producer and consumer may be on different devices; the tensor lives with its producer.
  const TensorId tensor = builder_.add_tensor(name, builder_.op_device(from), TensorKind::activation, bytes);
  builder_.add_output(from, tensor);
  builder_.add_input(to, tensor);
  return tensor;
}

}  // namespace weft::test
