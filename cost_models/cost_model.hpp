#pragma once

#include "cost_models/device_spec.hpp"
#include "simulator/core/op_work.hpp"
#include "simulator/core/units.hpp"

namespace weft {

// Turns the work of one op into a duration on one device. Implementations must be pure functions
// of their arguments (the engine costs each distinct (work, device spec) pair once) and must throw
// InputError when the device cannot run the work at all.
class CostModel {
 public:
  virtual ~CostModel() = default;
  virtual TimeNs duration(const OpWork& work, const DeviceSpec& spec) const = 0;
  // The host's time to issue one op of `op_class` to a device of `spec` (a framework's dispatch
  // and launch; a library call costs more than a kernel's launch): the ops of a host-issued
  // stream start no faster than their host issues them (docs/host-issue.md). Zero: the host is
  // never what such an op waits for.
  virtual TimeNs host_issue_ns(OpClass /*op_class*/, const DeviceSpec& /*spec*/) const { return 0; }
  // The device's own time between two kernels queued back to back on one stream of a device of
  // `spec` (the front end's launch of the next one): on a host-issued stream an op starts no
  // earlier than this after the op before it ends (docs/host-issue.md). Zero: none.
  virtual TimeNs kernel_gap_ns(const DeviceSpec& /*spec*/) const { return 0; }
};

}  // namespace weft
