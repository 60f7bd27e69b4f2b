#pragma once

#include <cstdint>

#include "simulator/workload/modules/module.hpp"

namespace weft {

// What one pass of a stack's cross-entropy moves and keeps, in bytes per logit (one token's entry
// of this rank's vocabulary shard), counted kernel by kernel from each implementation's source
// (docs/stacks.md, "Cross-entropy").
struct CrossEntropyTraffic {
  Bytes forward = 0;   // read and written by the forward kernels
  Bytes backward = 0;  // read and written by the backward kernels
  Bytes saved = 0;     // kept from the forward to the backward pass
  // Live only while a pass runs, besides its input and what it saves (forward), or besides what it
  // saved and the gradient it makes (backward): the fp32 copies an unfused framework allocates.
  Bytes forward_workspace = 0;
  Bytes backward_workspace = 0;
};

// The traffic of `kernels` over logits of `logit_bytes` per element (the training dtype).
CrossEntropyTraffic cross_entropy_traffic(CrossEntropyKernels kernels, Bytes logit_bytes);

// Cross-entropy over each TP rank's vocabulary shard as the stack computes it, and with TP > 1 one
// all-reduce of the per-token max, sum and target logit (Megatron's vocab-parallel loss).
class CrossEntropy : public Module {
 public:
  CrossEntropy(std::string name, std::int64_t vocab) : Module(std::move(name)), vocab_(vocab) {}
  void emit(const ShardContext& context, const std::string& prefix, std::vector<Step>& steps) const override;

 private:
  std::int64_t vocab_;
};

}  // namespace weft
