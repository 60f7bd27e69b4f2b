#include "kernels/operand_pool.hpp"

#include <algorithm>
#include <cstring>
#include <random>
#include <vector>

namespace weft {
namespace {

// bf16 of a value drawn from ±[0.5, 1): sign bit, exponent 126, seven random mantissa bits.
std::uint16_t moderate_half(std::mt19937& generator) {
  const auto bits = static_cast<std::uint16_t>(generator());
  return static_cast<std::uint16_t>((bits & 0x8000u) | (126u << 7) | (bits & 0x7Fu));
}

}  // namespace

void OperandPool::reserve(std::int64_t read_bytes, std::int64_t write_bytes, std::int64_t rotation_bytes) {
  rotation_bytes_ = std::max(rotation_bytes_, rotation_bytes);
  read_bytes += rotation_bytes_;
  write_bytes += rotation_bytes_;
  if (read_bytes > read_.bytes()) {
    const std::int64_t bytes = (read_bytes + 3) / 4 * 4;
    std::vector<std::uint16_t> halves(static_cast<std::size_t>(bytes / 2));
    std::mt19937 generator(2024);
    for (std::uint16_t& half : halves) half = moderate_half(generator);
    read_ = backend_.allocate(bytes);
    backend_.upload(read_.data(), reinterpret_cast<const std::byte*>(halves.data()), bytes);
  }
  if (write_bytes > write_.bytes()) write_ = backend_.allocate(write_bytes);
}

namespace {

// The offset of the next stretch of `bytes` in a region of `capacity`, after one ending at
// `offset`; stretches start on 256-byte boundaries, as device allocations do.
std::int64_t next_stretch(std::int64_t& offset, std::int64_t bytes, std::int64_t capacity) {
  constexpr std::int64_t kAlignment = 256;
  if (offset + bytes > capacity) offset = 0;
  const std::int64_t start = offset;
  offset = (offset + bytes + kAlignment - 1) / kAlignment * kAlignment;
  return start;
}

}  // namespace

OperandPool::Operands OperandPool::take(std::int64_t read_bytes, std::int64_t write_bytes) {
  if (rotation_bytes_ == 0) return {read_.data(), write_.data()};
  return {read_.data() + next_stretch(read_offset_, read_bytes, read_.bytes()),
          write_.data() + next_stretch(write_offset_, write_bytes, write_.bytes())};
}

}  // namespace weft
