#pragma once

#include <cstdint>

#include "simulator/core/enum_names.hpp"
#include "simulator/core/json_cursor.hpp"
#include "simulator/core/op_class.hpp"

namespace weft {

// Which implementation of its op class an op runs, where the time depends on more than the op's
// shape: a GEMM's operand layout, an attention kernel's family, a memory-bound kernel's kind.
// Calibration profiles key their tables on it; `any` is an op no table singles out. GEMM layouts
// name row-major operands as PyTorch lays them out for a linear layer: forward X·Wᵀ is `nt`,
// the input gradient dY·W `nn`, the weight gradient dYᵀ·X `tn`.
enum class Kernel : std::uint8_t {
  any,
  nn,
  nt,
  tn,
  cudnn,
  flash2,
  flash3,
  efficient,
  unfused,
  layernorm_fwd,
  layernorm_bwd,
  rmsnorm_fwd,
  rmsnorm_bwd,
  gelu_fwd,
  add,
  dropout,
  swiglu_fwd,
  swiglu_unfused_fwd,
  adamw_fused,
};

inline constexpr EnumNames<Kernel, 19> kKernelNames({
    "any",
    "nn",
    "nt",
    "tn",
    "cudnn",
    "flash2",
    "flash3",
    "efficient",
    "unfused",
    "layernorm_fwd",
    "layernorm_bwd",
    "rmsnorm_fwd",
    "rmsnorm_bwd",
    "gelu_fwd",
    "add",
    "dropout",
    "swiglu_fwd",
    "swiglu_unfused_fwd",
    "adamw_fused",
});

// The op class a kernel belongs to: `gemm`, `attention_fwd` for the attention families (both
// passes), `norm`, `elementwise` or `optimizer`; `other` for `any`.
constexpr OpClass kernel_class(Kernel kernel) {
  switch (kernel) {
    case Kernel::nn:
    case Kernel::nt:
    case Kernel::tn:
      return OpClass::gemm;
    case Kernel::cudnn:
    case Kernel::flash2:
    case Kernel::flash3:
    case Kernel::efficient:
    case Kernel::unfused:
      return OpClass::attention_fwd;
    case Kernel::layernorm_fwd:
    case Kernel::layernorm_bwd:
    case Kernel::rmsnorm_fwd:
    case Kernel::rmsnorm_bwd:
      return OpClass::norm;
    case Kernel::gelu_fwd:
    case Kernel::add:
    case Kernel::dropout:
    case Kernel::swiglu_fwd:
    case Kernel::swiglu_unfused_fwd:
      return OpClass::elementwise;
    case Kernel::adamw_fused:
      return OpClass::optimizer;
    case Kernel::any:
      break;
  }
  return OpClass::other;
}

// Whether ops of `op_class` may run `kernel` (every class may run `any`).
constexpr bool kernel_fits_class(Kernel kernel, OpClass op_class) {
  if (kernel == Kernel::any) return true;
  const OpClass home = kernel_class(kernel);
  if (home == OpClass::attention_fwd) return op_class == OpClass::attention_fwd || op_class == OpClass::attention_bwd;
  return home == op_class;
}

// Reads a kernel name for an op of `op_class`; errors name the JSON path and the kernels expected.
Kernel read_kernel(const JsonCursor& json, OpClass op_class);

}  // namespace weft
