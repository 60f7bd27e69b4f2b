#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "simulator/core/op_work.hpp"
#include "simulator/workload/software_stack.hpp"

namespace weft {

// One kernel of an optimizer step, in the order the step runs them.
struct OptimizerKernel {
  std::string_view name;
  OpWork work;
};

// How much a rank's optimizer step touches: the parameters it trains and holds gradients for,
// and the shard of them it updates (all of them without ZeRO).
struct OptimizerStepSize {
  std::int64_t shard_parameters = 0;
  Bytes gradient_buffer_bytes = 0;  // the gradients the rank keeps (zeroed each iteration)
};

// The kernels of one optimizer step as `stack` runs it for `training`-precision parameters,
// counted from each implementation's source (docs/stacks.md, "Optimizer step").
std::vector<OptimizerKernel> optimizer_step_kernels(const SoftwareStack& stack, Dtype training,
                                                    const OptimizerStepSize& size);

}  // namespace weft
