#pragma once

#include <cstdint>

#include "simulator/core/enum_names.hpp"

namespace weft {

// What a tensor holds. Parameters and optimizer states live for the whole run; the others live
// from their producer's start to their last consumer's end.
enum class TensorKind : std::uint8_t { parameter, gradient, optimizer_state, activation, buffer };

inline constexpr EnumNames<TensorKind, 5> kTensorKindNames({"parameter", "gradient", "optimizer_state", "activation",
                                                            "buffer"});
inline constexpr std::size_t kTensorKindCount = kTensorKindNames.size();

constexpr bool lives_whole_run(TensorKind kind) {
  return kind == TensorKind::parameter || kind == TensorKind::optimizer_state;
}

}  // namespace weft
