#pragma once

#include "simulator/workload/modules/attention_core.hpp"
#include "simulator/workload/modules/module.hpp"

namespace weft {

// Megatron's parallel self-attention: enter the TP region, fused QKV projection (column split),
// rotary embedding, attention core, output projection (row split), leave the TP region.
class SelfAttention : public Sequential {
 public:
  SelfAttention(std::string name, const ModelSpec& model, ContextParallelAlgorithm cp_algorithm);
};

}  // namespace weft
