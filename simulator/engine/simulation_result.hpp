#pragma once

#include <array>
#include <memory>
#include <vector>

#include "simulator/core/ids.hpp"
#include "simulator/core/op_class.hpp"
#include "simulator/core/units.hpp"
#include "simulator/engine/template_schedule.hpp"

namespace weft {

struct MemoryPoint {
  TimeNs time = 0;
  Bytes bytes = 0;  // live bytes from `time` until the next point
};

struct DeviceResult {
  TimeNs busy_ns = 0;  // time during which at least one of the device's streams ran an op
  std::array<TimeNs, kOpCategoryCount> busy_by_category{};  // summed op durations per category
  Bytes peak_memory = 0;
  TimeNs peak_memory_time = 0;               // first time the peak was reached
  Bytes memory_capacity = 0;                 // 0: unknown, no verdict
  bool oom = false;                          // peak_memory > memory_capacity
  std::vector<MemoryPoint> memory_timeline;  // filled when SimulationOptions asks for it
};

struct SimulationResult {
  TimeNs makespan = 0;
  std::vector<TimeNs> op_start;
  std::vector<TimeNs> op_end;
  // The op whose end set this op's start (a dependency, the previous op of a shared link, or
  // for a collective the dependency of its last-ready member); none for ops that started at 0
  // without waiting.
  std::vector<OpId> op_binding;
  std::vector<DeviceResult> devices;
  // The chain of ops that sets the makespan, first to last: each starts when the previous ends.
  std::vector<OpId> critical_path;
  // For each composite (by CompositeId): its template's schedule, relative to its origin; an op
  // inside starts at op_start of the composite - earliest_start + its op_start in the schedule.
  std::vector<std::shared_ptr<const TemplateSchedule>> composite_schedules;
  // Whether composites were reused as simulated templates, or, where that could not be exact,
  // the graph was simulated in full (flattened).
  bool reused_subgraphs = false;

  TimeNs start(OpId op) const { return op_start[op.value()]; }
  TimeNs end(OpId op) const { return op_end[op.value()]; }
  TimeNs duration(OpId op) const { return end(op) - start(op); }
};

}  // namespace weft
