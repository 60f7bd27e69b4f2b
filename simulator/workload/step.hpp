#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>

#include "cost_models/comm_group.hpp"
#include "simulator/core/dtype.hpp"
#include "simulator/core/enum_names.hpp"
#include "simulator/core/kernel.hpp"
#include "simulator/core/op_work.hpp"

namespace weft {

// How a stack computes the cross-entropy loss over the logits (docs/stacks.md): Megatron-LM's
// vocab-parallel cross-entropy (unfused, in fp32), PyTorch's F.cross_entropy over the logits cast
// to fp32, or one fused kernel over the 16-bit logits.
enum class CrossEntropyKernels : std::uint8_t { megatron, pytorch, fused };
inline constexpr EnumNames<CrossEntropyKernels, 3> kCrossEntropyKernelNames({"megatron", "pytorch", "fused"});

// The kernels a software stack runs where several implement one op (docs/stacks.md).
struct KernelChoices {
  Kernel attention = Kernel::any;  // the attention kernel (Kernel::unfused: scores materialized)
  bool fused_swiglu = true;        // SwiGLU in one kernel; false: SiLU and the product apart
  CrossEntropyKernels cross_entropy = CrossEntropyKernels::megatron;
  // The framework's own time per transformer layer and pass, in which the device runs none of the
  // layer's kernels (docs/stacks.md, "Framework time per layer"); 0: none charged.
  TimeNs layer_framework_ns = 0;
  auto operator<=>(const KernelChoices&) const = default;
};

// How a module is sharded on one rank: the parallel degrees that divide its work and the
// tokens of one microbatch it sees.
struct ShardContext {
  int tp = 1;
  int cp = 1;
  bool sequence_parallel = false;
  std::int64_t micro_batch = 1;
  std::int64_t seq_len = 1;  // tokens per sample (the whole sequence)
  // Keys each query attends to on average when a sequence packs clips that attend within
  // themselves (sum of clip lengths squared over their sum); 0: the whole sequence.
  std::int64_t attention_span = 0;
  // With a block-sparse attention kernel, keys per query that the slowest CP rank's attention
  // computes, as a share of the keys each query could attend, from the sequence's mask and how
  // the tokens are dealt (masked_attention.hpp); 0: the model's own mask, evenly dealt (causal:
  // half). `causal_share`: the mask is the causal one, which a causal model's causal kernel
  // computes (at its own measured rate); otherwise the kernel computes the share as dense tiles.
  double attention_share = 0.0;
  bool causal_share = false;
  Dtype dtype = Dtype::bf16;
  KernelChoices kernels;

  // Tokens of one microbatch on this rank (context parallelism splits the sequence).
  std::int64_t tokens() const { return micro_batch * seq_len / cp; }
  // Tokens in the regions sequence parallelism splits across the TP group (norms, dropout).
  std::int64_t sharded_tokens() const { return sequence_parallel ? tokens() / tp : tokens(); }
  Bytes element_bytes() const { return bytes_per_element(dtype); }
  auto operator<=>(const ShardContext&) const = default;
};

// One step of a module's forward pass on one rank, and what its backward pass does: the
// input-gradient op on the backward chain and an optional weight-gradient op off it (the dgrad/
// wgrad split that zero-bubble schedules move apart). Communication steps name their
// communicator; their backward op is the conjugate collective.
struct Step {
  std::string name;
  std::optional<OpWork> forward;       // none: the identity (Megatron's f operator without SP)
  std::optional<OpWork> backward;      // none: the gradient passes through unchanged
  std::optional<OpWork> weight_grad;   // needs the saved input and the output gradient
  std::optional<OpWork> regather;      // SP: all-gather of the saved input shard for weight_grad
  std::optional<CommGroupKind> comm;   // communicator of this step's collectives
  Bytes output_bytes = 0;              // the forward output, and the gradient flowing back
  Bytes saved_bytes = 0;               // kept from the forward to the backward pass
  Bytes forward_workspace_bytes = 0;   // live only while the forward op runs
  Bytes backward_workspace_bytes = 0;  // live only while the backward op runs
  Bytes weight_grad_saved_bytes = 0;   // part of saved_bytes only weight_grad reads (a linear's input)
  Bytes recomputable_bytes = 0;        // part of saved_bytes dropped by selective recompute
  double model_flops = 0.0;            // forward FLOPs by Megatron's convention (no causal halving)
  // Model FLOPs of a training step per forward FLOP: 3 (forward, input and weight gradients), 2
  // in a frozen module that passes gradients on, 1 in one that needs none (papers/004 §4.2).
  double training_flops_factor = 3.0;
  std::int64_t parameters = 0;         // parameters held on this rank
  std::int64_t shared_parameters = 0;  // parameters it reads that another step holds (a tied head)
  bool trainable = true;               // false: its parameters are frozen (no gradients, no optimizer)
  bool attention_core = false;         // the region selective recompute recomputes
  // Under per-op selective checkpointing (PyTorch's, as torchtitan runs it: each layer keeps its
  // input and the outputs of attention and of every other matmul, and recomputes the rest before
  // its backward pass): the bytes of this step's output it keeps, and the share of its forward op
  // it runs again (a matmul of several, such as Q, K and V, runs again the columns of those not kept).
  Bytes op_checkpoint_bytes = 0;
  double op_recompute_share = 1.0;
  std::optional<OpWork> op_recompute;  // a share below 1 of a matmul: the columns it runs again
  int context_parallel_chunks = 1;     // >1: ring attention over this many KV chunks
  Bytes context_parallel_bytes = 0;    // KV bytes passed to the next CP rank per ring step

  bool operator==(const Step&) const = default;
};

inline std::int64_t parameters_of(std::span<const Step> steps) {
  std::int64_t total = 0;
  for (const Step& step : steps) total += step.parameters;
  return total;
}

}  // namespace weft
