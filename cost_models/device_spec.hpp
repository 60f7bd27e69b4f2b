#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "simulator/core/dtype.hpp"
#include "simulator/core/enum_names.hpp"
#include "simulator/core/json_cursor.hpp"
#include "simulator/core/units.hpp"

namespace weft {

// A compute device (GPU, CPU) or a communication device (a link, a NIC). As in SEMU, both are
// described by the same three capacities; a device without one of them cannot run ops that need it.
enum class DeviceKind : std::uint8_t { gpu, cpu, link };

inline constexpr EnumNames<DeviceKind, 3> kDeviceKindNames({"gpu", "cpu", "link"});

struct DeviceSpec {
  std::string name;
  DeviceKind kind = DeviceKind::gpu;
  std::string architecture;  // e.g. "sm90": software stacks choose kernels by it; empty when unknown
  std::array<double, kDtypeCount> peak_flops{};  // FLOP/s per dtype, dense; 0 where unsupported
  double memory_bandwidth = 0.0;                 // bytes/s
  double network_bandwidth = 0.0;                // bytes/s, one direction
  Bytes memory_capacity = 0;                     // bytes; 0 for devices without memory (links)
  int streaming_multiprocessors = 0;             // a GPU's SMs; 0 when unknown
  // The SMs NCCL's collective kernels hold while they run (one thread block per channel, on an SM
  // of its own: compute kernels beside them get the rest); 0 when unknown, and then no compute is
  // slowed by the collectives it overlaps (docs/collectives.md).
  int collective_sms = 0;
  // The same for a collective whose group spans nodes (NCCL runs fewer channels there: two per
  // NIC); 0: as inside a node.
  int collective_sms_across_nodes = 0;
  // What the driver calls this device (cudaGetDeviceProperties' name, as weft bench writes it into
  // measurement files and profiles), e.g. "NVIDIA H100 80GB HBM3".
  std::vector<std::string> reported_names;
  // The fraction of its healthy rate this GPU's kernels run at (a straggler: stragglers.hpp); a
  // cluster's GPUs are read at 1 and the workload builder slows the ones its cluster lists.
  double speed = 1.0;

  double peak(Dtype dtype) const { return peak_flops[static_cast<std::size_t>(dtype)]; }
  // Whether a profile or measurement of `device` (a spec name or a driver's name) was taken on
  // this device.
  bool is(const std::string& device) const;
  bool operator==(const DeviceSpec&) const = default;
};

// Reads a spec object:
//   {"name": "h100-sxm", "kind": "gpu", "architecture": "sm90", "peak_tflops": {"bf16": 989, ...},
//    "memory_bandwidth_GBps": 3350, "network_bandwidth_GBps": 0, "memory_MiB": 81559, "sms": 132,
//    "collective_sms": 24, "collective_sms_across_nodes": 16, "reported_names": ["NVIDIA H100 80GB HBM3"]}
DeviceSpec parse_device_spec(const JsonCursor& json);

// A spec given by name from the bundled library (scenarios/clusters/devices/<name>.json),
// inline, or as {"base": "<name>", <fields to replace>}.
DeviceSpec load_device_spec(const JsonCursor& json);

}  // namespace weft
