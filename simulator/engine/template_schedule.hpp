#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "simulator/core/op_class.hpp"
#include "simulator/core/units.hpp"
#include "simulator/engine/memory_profile.hpp"

namespace weft {

// A subgraph template's simulated schedule: what the engine stamps for every composite that
// instantiates the template in the same situation. Times are relative to the composite's origin
// (the instant its last gating dependency completed); the composite's reported start is
// origin + earliest_start, so an op inside starts at
//   start(composite) - earliest_start + op_start[op].
struct TemplateSchedule {
  struct DeviceEffects {
    // Changes of the live bytes of tensors that live and die inside, by instant, in time order.
    MemoryProfile memory;
    // Starts (+1) and ends (-1) of the device's busy intervals, in time order.
    std::vector<std::pair<TimeNs, int>> activity;
    std::array<TimeNs, kOpCategoryCount> busy_by_category{};
  };

  TimeNs span = 0;                         // end of the last op
  TimeNs earliest_start = 0;               // start of the first op
  std::vector<TimeNs> op_start;            // per template op
  std::vector<TimeNs> op_end;              // per template op
  std::vector<TimeNs> stream_first_start;  // per template stream: start of its first op
  std::vector<TimeNs> stream_release;      // per template stream: end of its last op
  // Per template stream: the latest time (from the origin) by which its host may have issued
  // every op before the template without holding back any op inside; the maximum TimeNs for a
  // stream no host issues (docs/host-issue.md).
  std::vector<TimeNs> host_slack;
  std::vector<TimeNs> output_alloc;    // per output port: start of its producer
  std::vector<TimeNs> output_ready;    // per output port: end of its producer
  std::vector<TimeNs> output_release;  // per output port: end of its last reader inside, or -1
  std::vector<TimeNs> input_release;   // per input port: end of its last reader inside
  std::vector<TimeNs> signal_time;     // per signal port
  // Per output port: for a bundle, when each member is produced (the bundle is ready when all are)
  // and, for the members read inside, (member index, when the last reader inside ends): most are
  // not, and a reader's settling walks this list per microbatch.
  std::vector<std::vector<TimeNs>> member_ready;
  std::vector<std::vector<std::pair<std::uint32_t, TimeNs>>> member_read_inside;
  // Per input port: for a bundle, when each member's last reader inside ends (-1 without one).
  std::vector<std::vector<TimeNs>> member_release;
  std::vector<DeviceEffects> devices;  // per template device
  // Per template op: the schedule of a composite inside (null for other ops).
  std::vector<std::shared_ptr<const TemplateSchedule>> nested;
};

class Subgraph;

// Fills the times at the template's boundary (span, earliest start, stream releases, port and
// signal times) from its ops' times and nested schedules.
void derive_boundary_times(const Subgraph& subgraph, TemplateSchedule& schedule);

}  // namespace weft
