#pragma once

#include <map>
#include <string>

#include "cost_models/device_spec.hpp"
#include "simulator/core/json_cursor.hpp"
#include "simulator/workload/step.hpp"

namespace weft {

// The training software a run uses, as data (docs/stacks.md): which kernels it runs where
// several implement one op. A scenario names one ("stack"); the default is Megatron-Core with
// Transformer Engine.
struct SoftwareStack {
  std::string name;
  // The attention kernel per GPU architecture (DeviceSpec::architecture), with a default: a
  // fused family, or `unfused` (scores, softmax and dropout materialized).
  std::map<std::string, Kernel> attention;
  Kernel default_attention = Kernel::any;
  bool fused_swiglu = true;

  // The kernels this stack runs on `gpu`.
  KernelChoices kernels(const DeviceSpec& gpu) const;
};

// The stack every scenario that names none runs.
inline constexpr std::string_view kDefaultStack = "megatron-core";

// A stack by name from scenarios/stacks/, inline, or {"base": "<name>", <fields to replace>}.
SoftwareStack load_software_stack(const JsonCursor& json);

}  // namespace weft
