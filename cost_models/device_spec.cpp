#include "cost_models/device_spec.hpp"

#include <algorithm>
#include <cmath>
#include <utility>

#include "simulator/core/spec_resolver.hpp"

namespace weft {

DeviceSpec parse_device_spec(const JsonCursor& json) {
  json.expect_only({"name", "kind", "architecture", "description", "source", "peak_tflops", "memory_bandwidth_GBps",
                    "network_bandwidth_GBps", "memory_MiB", "sms", "collective_sms", "collective_sms_across_nodes",
                    "reported_names"});
  DeviceSpec spec;
  spec.name = json.at("name").as_string();
  if (spec.name.empty()) json.at("name").fail("expected a non-empty name");
  spec.kind = json.at("kind").as_enum(kDeviceKindNames);
  if (auto architecture = json.find("architecture")) spec.architecture = architecture->as_string();
  if (auto peaks = json.find("peak_tflops")) {
    for (const auto& [dtype_name, value] : peaks->members()) {
      auto dtype = kDtypeNames.parse(dtype_name);
      if (!dtype) value.fail("unknown dtype (expected " + kDtypeNames.choices() + ")");
      spec.peak_flops[static_cast<std::size_t>(*dtype)] = value.as_nonnegative_number() * 1e12;
    }
  }
  if (auto bandwidth = json.find("memory_bandwidth_GBps")) {
    spec.memory_bandwidth = bandwidth->as_nonnegative_number() * kBytesPerGB;
  }
  if (auto bandwidth = json.find("network_bandwidth_GBps")) {
    spec.network_bandwidth = bandwidth->as_nonnegative_number() * kBytesPerGB;
  }
  if (auto memory = json.find("memory_MiB")) {
    spec.memory_capacity = static_cast<Bytes>(std::llround(memory->as_nonnegative_number() * kBytesPerMiB));
  }
  if (auto sms = json.find("sms")) spec.streaming_multiprocessors = static_cast<int>(sms->as_int_in(1, 4096));
  for (auto [field, value] : {std::pair{"collective_sms", &spec.collective_sms},
                              std::pair{"collective_sms_across_nodes", &spec.collective_sms_across_nodes}}) {
    if (auto sms = json.find(field)) {
      if (spec.streaming_multiprocessors == 0) sms->fail("needs \"sms\", the SMs they are a part of");
      *value = static_cast<int>(sms->as_int_in(0, spec.streaming_multiprocessors - 1));
    }
  }
  if (auto names = json.find("reported_names")) {
    for (const JsonCursor& name : names->elements()) {
      spec.reported_names.push_back(name.as_string());
      if (spec.reported_names.back().empty()) name.fail("expected a non-empty name");
    }
  }
  if (spec.kind == DeviceKind::link && spec.memory_capacity > 0) {
    json.at("memory_MiB").fail("a link device has no memory");
  }
  return spec;
}

bool DeviceSpec::is(const std::string& device) const {
  return device == name || std::find(reported_names.begin(), reported_names.end(), device) != reported_names.end();
}

DeviceSpec load_device_spec(const JsonCursor& json) {
  return load_spec<DeviceSpec>(json, "clusters/devices", "device spec", parse_device_spec);
}

}  // namespace weft
