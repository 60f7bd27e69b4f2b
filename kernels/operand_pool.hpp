#pragma once

#include <cstdint>

#include "kernels/backend.hpp"

namespace weft {

// Several times the largest last-level cache of the devices weft runs on (the H100's 50 MB L2; a
// CPU socket's L3).
inline constexpr std::int64_t kTrainingOperandRotation = std::int64_t{256} << 20;

// Device memory for ops run for their time, not their values (benchmarks, the live executor):
// one region ops read and one region ops write, each grown to the largest op. The read region
// holds 16-bit halves that are bf16 values drawn from a standard normal distribution, as a
// training step's tensors roughly are (and as PyTorch references draw them: a GPU's sustained
// clock, so a kernel's time, depends on how many bits its operands toggle). Read as fp32 words, as
// bf16 or as fp16 they are normal numbers of modest size (a bf16 exponent far from the ends of
// its range is one fp16 does not overflow or underflow), so no kernel meets a NaN, an infinity
// or a subnormal slow path, and since no op reads what another wrote, values never grow. Each
// half is one of 65,536 draws, picked by a hash of its position, so that reserving many gigabytes
// takes no long host work and the region never repeats itself.
//
// Without a rotation every op reads and writes the regions' start: the same operands over and
// over, cache-hot. With a rotation each op takes the next stretch of both regions instead, so that
// consecutive ops touch memory the ones before them did not, as a training step's ops read
// activations and weights of their own: `weft live` runs plans so and `weft bench` times kernels
// so, rotating through kTrainingOperandRotation more bytes than the largest op needs.
class OperandPool {
 public:
  explicit OperandPool(Backend& backend) : backend_(backend) {}

  // Grows the regions to hold `read_bytes` and `write_bytes` plus `rotation_bytes` more to rotate
  // through (0: every op takes the regions' start).
  void reserve(std::int64_t read_bytes, std::int64_t write_bytes, std::int64_t rotation_bytes = 0);
  const std::byte* read() const { return read_.data(); }
  std::byte* write() const { return write_.data(); }
  std::int64_t read_bytes() const { return read_.bytes(); }
  std::int64_t write_bytes() const { return write_.bytes(); }

  struct Operands {
    const std::byte* read;
    std::byte* write;
  };
  // Where the next op reads `read_bytes` and writes `write_bytes`: the regions' start without a
  // rotation, else the stretch after the previous op's, wrapping to the start when it would not
  // fit.
  Operands take(std::int64_t read_bytes, std::int64_t write_bytes);

 private:
  Backend& backend_;
  Buffer read_;
  Buffer write_;
  std::int64_t rotation_bytes_ = 0;
  std::int64_t read_offset_ = 0;
  std::int64_t write_offset_ = 0;
};

}  // namespace weft
