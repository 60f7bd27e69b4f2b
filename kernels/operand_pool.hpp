#pragma once

#include <cstdint>

#include "kernels/backend.hpp"

namespace weft {

// Device memory for ops run for their time, not their values (benchmarks, the live executor):
// one region every op reads and one region ops write, each grown to the largest op. The read
// region holds 16-bit halves that are bf16 values in ±[0.5, 1); read as fp32 words, as bf16 or
// as fp16 they are normal numbers of modest size, so no kernel meets a NaN, an infinity or a
// subnormal slow path, and since no op reads what another wrote, values never grow.
class OperandPool {
 public:
  explicit OperandPool(Backend& backend) : backend_(backend) {}

  void reserve(std::int64_t read_bytes, std::int64_t write_bytes);
  const std::byte* read() const { return read_.data(); }
  std::byte* write() const { return write_.data(); }
  std::int64_t read_bytes() const { return read_.bytes(); }
  std::int64_t write_bytes() const { return write_.bytes(); }

 private:
  Backend& backend_;
  Buffer read_;
  Buffer write_;
};

}  // namespace weft
