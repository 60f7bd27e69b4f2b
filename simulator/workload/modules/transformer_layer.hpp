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

  // Also marks what per-op selective checkpointing keeps and recomputes of each step
  // (Step::op_checkpoint_bytes).
  void emit(const ShardContext& context, const std::string& prefix, std::vector<Step>& steps) const override;

 private:
  // The output widths of the matmuls an eager framework runs for each of the layer's linear
  // steps, in forward order: Q, K and V apart; a gated MLP's W1 then W3.
  std::vector<std::vector<std::int64_t>> matmul_widths_;
};

}  // namespace weft
