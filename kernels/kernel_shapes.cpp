#include "kernels/kernel_shapes.hpp"

#include <string>

#include "simulator/core/input_error.hpp"

namespace weft {
namespace {

void check_positive(std::int64_t value, const char* op, const char* what) {
  if (value <= 0) throw InputError(std::string(op) + ": " + what + " must be positive, got " + std::to_string(value));
}

}  // namespace

std::string attention_text(const AttentionShape& s) {
  std::string text = "[" + std::to_string(s.batch) + ", " + std::to_string(s.heads);
  if (s.key_heads() != s.heads) text += " on " + std::to_string(s.key_heads()) + " kv";
  for (std::int64_t x : {s.queries, s.keys, s.head_dim}) text += ", " + std::to_string(x);
  return text + (s.causal ? ", causal] " : "] ") + std::string(kDtypeNames.name(s.dtype));
}

void check_shape(const GemmShape& shape) {
  check_positive(shape.m, "gemm", "m");
  check_positive(shape.n, "gemm", "n");
  check_positive(shape.k, "gemm", "k");
}

void check_shape(const AttentionShape& shape) {
  check_positive(shape.batch, "attention", "batch");
  check_positive(shape.heads, "attention", "heads");
  check_positive(shape.queries, "attention", "queries");
  check_positive(shape.keys, "attention", "keys");
  check_positive(shape.head_dim, "attention", "head_dim");
  if (shape.kv_heads < 0 || (shape.kv_heads > 0 && shape.heads % shape.kv_heads != 0)) {
    throw InputError("attention: kv_heads must divide heads (" + std::to_string(shape.heads) + "), got " +
                     std::to_string(shape.kv_heads));
  }
  if (shape.causal && shape.keys < shape.queries) {
    throw InputError("attention: causal attention needs at least as many keys as queries, got " +
                     std::to_string(shape.keys) + " keys for " + std::to_string(shape.queries) + " queries");
  }
}

void check_shape(const MemoryBoundShape& shape) {
  check_positive(shape.outputs, "memory-bound op", "outputs");
  if (shape.inputs < 0) throw InputError("memory-bound op: inputs must be >= 0");
  if (shape.flops_per_output < 0) throw InputError("memory-bound op: flops per output must be >= 0");
}

}  // namespace weft
