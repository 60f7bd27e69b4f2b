#pragma once

#include "simulator/workload/modules/attention_core.hpp"
#include "simulator/workload/modules/module.hpp"

namespace weft {

// A pre-norm transformer layer: norm, self-attention, residual add (with dropout), norm, MLP,
// residual add. A DiT layer adds adaLN-Zero: a per-sample linear from the conditioning vector
// to six modulation vectors, a shift-and-scale after each norm and a gate before each residual.
class TransformerLayer : public Sequential {
 public:
  TransformerLayer(std::string name, const ModelSpec& model, ContextParallelAlgorithm cp_algorithm);
};

}  // namespace weft
