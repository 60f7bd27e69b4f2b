#pragma once

#include "simulator/workload/model_spec.hpp"
#include "simulator/workload/modules/module.hpp"

namespace weft {

// How context parallelism exchanges keys and values: a ring of point-to-point transfers
// overlapped with the attention of the chunk at hand, or one all-gather before it.
enum class ContextParallelAlgorithm : std::uint8_t { ring, allgather };

inline constexpr EnumNames<ContextParallelAlgorithm, 2> kContextParallelAlgorithmNames({"ring", "allgather"});

// softmax(Q K^T / sqrt(d)) V over the rank's heads (heads / TP) and query tokens (its CP chunk),
// attending to the whole sequence. Model FLOPs follow Megatron: 4 x tokens x sequence x width,
// no causal halving; the kernel's executed FLOPs halve for causal masks, and its backward does
// 2.5x the forward (flash attention recomputes the scores; the unfused backward 2x).
// Saved for backward: Q, K, V and the softmax statistics (flash), or Q, K, V plus the softmax
// output, dropout mask and dropout output (unfused: Korthikanti's 5as^2b term, which selective
// recompute drops).
class AttentionCore : public Module {
 public:
  AttentionCore(std::string name, const ModelSpec& model, ContextParallelAlgorithm cp_algorithm)
      : Module(std::move(name)), model_(model), cp_algorithm_(cp_algorithm) {}

  void emit(const ShardContext& context, const std::string& prefix, std::vector<Step>& steps) const override;

 private:
  const ModelSpec& model_;
  ContextParallelAlgorithm cp_algorithm_;
};

}  // namespace weft
