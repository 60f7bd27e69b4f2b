#pragma once

#include <cstdint>

#include "simulator/core/enum_names.hpp"

namespace weft {

// What a tensor holds. Parameters and optimizer states live for the whole run; the others live
// from their producer's start to their last consumer's end. A bundle stands for several tensors
// that one composite op hands to another (docs/ARCHITECTURE.md, bundles); its members hold the
// memory, it holds none. A workspace is an op's scratch memory: it lives while its producer runs
// and nothing reads it.
enum class TensorKind : std::uint8_t { parameter, gradient, optimizer_state, activation, buffer, bundle, workspace };

inline constexpr EnumNames<TensorKind, 7> kTensorKindNames({"parameter", "gradient", "optimizer_state", "activation",
                                                            "buffer", "bundle", "workspace"});
inline constexpr std::size_t kTensorKindCount = kTensorKindNames.size();

constexpr bool lives_whole_run(TensorKind kind) {
  return kind == TensorKind::parameter || kind == TensorKind::optimizer_state;
}

constexpr bool holds_memory(TensorKind kind) { return kind != TensorKind::bundle; }

}  // namespace weft
