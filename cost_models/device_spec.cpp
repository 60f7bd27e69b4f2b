#include "cost_models/device_spec.hpp"

#include <cmath>

#include "simulator/core/scenario_library.hpp"

namespace weft {

DeviceSpec parse_device_spec(const JsonCursor& json) {
  json.expect_only({"name", "kind", "description", "source", "peak_tflops", "memory_bandwidth_GBps",
                    "network_bandwidth_GBps", "memory_MiB"});
  DeviceSpec spec;
  spec.name = json.at("name").as_string();
  if (spec.name.empty()) json.at("name").fail("expected a non-empty name");
  spec.kind = json.at("kind").as_enum(kDeviceKindNames);
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
  if (spec.kind == DeviceKind::link && spec.memory_capacity > 0) {
    json.at("memory_MiB").fail("a link device has no memory");
  }
  return spec;
}

DeviceSpec load_device_spec(const JsonCursor& json) {
  if (json.is_object()) return parse_device_spec(json);
  if (!json.is_string()) json.fail("expected a device spec name or an inline spec object");
  const std::string name = json.as_string();
  std::filesystem::path file;
  try {
    file = ScenarioLibrary::find("clusters/devices", name, "device spec");
  } catch (const InputError& error) {
    json.fail(error.what());
  }
  const JsonDocument document = JsonDocument::parse_file(file);
  try {
    return parse_device_spec(document.root());
  } catch (const InputError& error) {
    throw InputError(file.string() + ": " + error.what());
  }
}

}  // namespace weft
