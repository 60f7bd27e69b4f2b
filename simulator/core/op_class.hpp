#pragma once

#include <cstdint>

#include "simulator/core/enum_names.hpp"

namespace weft {

// What an operator does. Cost models key their rules on it; reports group time by its category.
enum class OpClass : std::uint8_t {
  gemm,
  attention_fwd,
  attention_bwd,
  elementwise,
  norm,
  embedding,
  loss,
  optimizer,
  allreduce,
  allgather,
  reducescatter,
  alltoall,
  broadcast,
  send,
  recv,
  memcpy,
  host,
  other,
  barrier,  // waits for its inputs and takes no time, whatever the cost model says
};

inline constexpr EnumNames<OpClass, 19> kOpClassNames({
    "gemm",      "attention_fwd", "attention_bwd", "elementwise",   "norm",     "embedding", "loss",
    "optimizer", "allreduce",     "allgather",     "reducescatter", "alltoall", "broadcast", "send",
    "recv",      "memcpy",        "host",          "other",         "barrier",
});
inline constexpr std::size_t kOpClassCount = kOpClassNames.size();

// The coarse kind of time an op accounts for.
enum class OpCategory : std::uint8_t { compute, communication, memory, host };

inline constexpr EnumNames<OpCategory, 4> kOpCategoryNames({"compute", "communication", "memory", "host"});
inline constexpr std::size_t kOpCategoryCount = kOpCategoryNames.size();

constexpr OpCategory category_of(OpClass op_class) {
  switch (op_class) {
    case OpClass::allreduce:
    case OpClass::allgather:
    case OpClass::reducescatter:
    case OpClass::alltoall:
    case OpClass::broadcast:
    case OpClass::send:
    case OpClass::recv:
      return OpCategory::communication;
    case OpClass::memcpy:
      return OpCategory::memory;
    case OpClass::host:
    case OpClass::barrier:
      return OpCategory::host;
    default:
      return OpCategory::compute;
  }
}

// Collective classes: their ops are grouped, and every member starts when the last one is ready.
// Every communication class but the point-to-point ones.
constexpr bool is_collective_class(OpClass op_class) {
  return category_of(op_class) == OpCategory::communication && op_class != OpClass::send && op_class != OpClass::recv;
}

}  // namespace weft
