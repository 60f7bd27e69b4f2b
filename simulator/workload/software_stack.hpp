#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "cost_models/device_spec.hpp"
#include "simulator/core/json_cursor.hpp"
#include "simulator/workload/step.hpp"

namespace weft {

// The kernels around Adam in one optimizer step (docs/stacks.md, "Optimizer step"): Megatron-LM's
// mixed-precision optimizer (fp32 main parameters, a gradient norm, a copy back to the 16-bit
// parameters, gradient buffers zeroed each iteration), which DeepSpeed's BF16 optimizer matches, or
// PyTorch's clip_grad_norm_ then AdamW over fp32 parameters.
enum class OptimizerStepKernels : std::uint8_t { megatron, pytorch };
inline constexpr EnumNames<OptimizerStepKernels, 2> kOptimizerStepKernelNames({"megatron", "pytorch"});

// What `recompute: selective` recomputes under a stack (docs/stacks.md): Megatron-LM's attention
// core (the scores and softmax output unfused attention keeps), or PyTorch's per-op selective
// checkpointing as torchtitan runs it (Step::op_checkpoint_bytes).
enum class SelectiveRecompute : std::uint8_t { attention_core, per_op };
inline constexpr EnumNames<SelectiveRecompute, 2> kSelectiveRecomputeNames({"attention-core", "per-op"});

// More than any GPU holds: a CUDA context beyond it is a typing error (bytes given as MiB).
inline constexpr std::int64_t kMaxCudaContextMiB = 1 << 16;
// The most framework time per layer pass a stack may state: a second.
inline constexpr std::int64_t kMaxLayerFrameworkUs = 1'000'000;

// Whether a training dtype is mixed precision (16-bit compute beside fp32 master weights) rather
// than fp32 training, on the CUDA cores (fp32) or the tensor cores (tf32).
constexpr bool mixed_precision(Dtype training) { return bytes_per_element(training) < 4; }

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
  CrossEntropyKernels cross_entropy = CrossEntropyKernels::megatron;
  OptimizerStepKernels optimizer_step = OptimizerStepKernels::megatron;
  // Whether data-parallel gradient reduction and ZeRO-1 parameter gathers overlap compute
  // (Megatron-Core's --overlap-grad-reduce and --overlap-param-gather) or run after the backward
  // pass and the optimizer step; a scenario's options may say otherwise.
  bool overlap_grad_reduce = true;
  // Bytes per gradient element kept and reduced over data parallelism, per training dtype:
  // Megatron-LM accumulates and all-reduces bf16 training's gradients in fp32 ("bfloat16 requires
  // gradient accumulation and all-reduce to be done in fp32", arguments.py) and fp16 training's in
  // fp16 unless told otherwise.
  Bytes bf16_gradient_bytes = 4;
  Bytes fp16_gradient_bytes = 2;

  // DeepSpeed's BF16 optimizer keeps each parameter's 16-bit gradient besides the fp32
  // accumulator it reduces (2 more bytes per parameter, never communicated).
  bool keeps_low_precision_gradients = false;

  // Training in fp32 or tf32 keeps and reduces fp32 gradients whatever the stack.
  Bytes gradient_bytes(Dtype training) const {
    if (!mixed_precision(training)) return 4;
    return training == Dtype::fp16 ? fp16_gradient_bytes : bf16_gradient_bytes;
  }
  // What gradients hold per trained parameter: the reduced buffer and any 16-bit copy (none in
  // fp32 or tf32 training, whose gradients are fp32 already).
  Bytes gradient_memory_bytes(Dtype training) const {
    const bool copy = keeps_low_precision_gradients && mixed_precision(training);
    return gradient_bytes(training) + (copy ? bytes_per_element(training) : 0);
  }
  bool overlap_param_gather = true;
  // Forward tensor-parallel communication overlapped with the GEMMs beside it, as Megatron-Core's
  // --tp-comm-overlap runs Transformer Engine's userbuffers (docs/stacks.md).
  bool tp_comm_overlap = false;
  // The model's parameters are fp32 and are themselves the optimizer's master copy, cast to the
  // training precision where they are used (PyTorch's autocast, FSDP's mixed precision), rather
  // than 16-bit parameters beside an fp32 copy the optimizer keeps (Megatron-LM, DeepSpeed).
  bool fp32_parameters = false;
  SelectiveRecompute selective_recompute = SelectiveRecompute::attention_core;
  // Device memory the CUDA context of one training process holds besides every tensor: the
  // driver's state and the kernels loaded into it, all of each library's at start-up before CUDA
  // 11.7's lazy module loading (PyTorch before 1.13), only those used since (docs/stacks.md). The
  // default of a scenario's framework overhead (options.framework_overhead_GiB).
  Bytes cuda_context = 0;
  // Time per transformer layer and pass (forward, backward, each forward run again) in which the
  // framework runs its own code and the device none of the layer's kernels: one global figure per
  // stack, fitted end to end (docs/VALIDATION.md, "Framework time per layer").
  TimeNs layer_framework_ns = 0;
  // Bytes a parameter holds on its own, and the optimizer's states per trained parameter: Adam's
  // two fp32 moments, and the fp32 master copy unless the parameters are it (they are when the
  // stack keeps them in fp32, and in training without mixed precision).
  bool parameters_are_master(Dtype training) const { return fp32_parameters || !mixed_precision(training); }
  Bytes parameter_bytes(Dtype training) const { return parameters_are_master(training) ? 4 : 2; }
  Bytes optimizer_state_bytes(Dtype training) const { return parameters_are_master(training) ? 8 : 12; }
  // The vocabulary is padded to a multiple of this times the TP size (Megatron-LM's
  // --make-vocab-size-divisible-by, 128 by default); 1: not padded.
  std::int64_t vocab_divisible_by = 1;
  std::int64_t vocab_multiple(int tp) const { return vocab_divisible_by > 1 ? vocab_divisible_by * tp : 1; }

  // The kernels this stack runs on `gpu`.
  KernelChoices kernels(const DeviceSpec& gpu) const;
};

// Why this stack cannot train in `training` on `gpu`, if it cannot: the fused attention kernels
// (FlashAttention, cuDNN) take fp16 and bf16 inputs only.
std::optional<std::string> attention_dtype_conflict(const SoftwareStack& stack, const DeviceSpec& gpu, Dtype training);

// The stack every scenario that names none runs.
inline constexpr std::string_view kDefaultStack = "megatron-core";

// A stack by name from scenarios/stacks/, inline, or {"base": "<name>", <fields to replace>}.
SoftwareStack load_software_stack(const JsonCursor& json);

}  // namespace weft
