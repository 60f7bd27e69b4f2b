#include "kernels/operand_pool.hpp"

#include <algorithm>
#include <cstring>
#include <random>
#include <vector>

namespace weft {
namespace {

constexpr std::int64_t kPieceBytes = std::int64_t{64} << 20;  // uploaded one piece at a time
constexpr int kDrawBits = 16;                                 // a table of 65,536 draws

// bf16 of a value drawn from N(0, 1), rounded to nearest even; never 0 and never near bf16's
// range ends, since |x| stays between 2^-60 and 2^10 for any draw a generator makes.
std::uint16_t normal_half(std::mt19937& generator, std::normal_distribution<float>& normal) {
  float x = normal(generator);
  if (x == 0.0f) x = 1.0f;
  std::uint32_t bits = 0;
  std::memcpy(&bits, &x, sizeof(bits));
  return static_cast<std::uint16_t>((bits + 0x7FFFu + ((bits >> 16) & 1u)) >> 16);
}

// Which draw the half at `index` of the region holds: its index through MurmurHash3's 64-bit
// finaliser (each step of it: with fewer, the top bits of nearby indices step linearly and the
// region repeats itself shifted), so that the region never repeats itself. The CPU backend
// streamed a region that repeated every 64 MiB three times slower than fresh values (cause not
// found).
std::size_t draw_at(std::uint64_t index) {
  index ^= index >> 33;
  index *= 0xFF51AFD7ED558CCDull;
  index ^= index >> 33;
  index *= 0xC4CEB9FE1A85EC53ull;
  index ^= index >> 33;
  return static_cast<std::size_t>(index >> (64 - kDrawBits));
}

}  // namespace

void OperandPool::reserve(std::int64_t read_bytes, std::int64_t write_bytes, std::int64_t rotation_bytes) {
  rotation_bytes_ = std::max(rotation_bytes_, rotation_bytes);
  read_bytes += rotation_bytes_;
  write_bytes += rotation_bytes_;
  if (read_bytes > read_.bytes()) {
    const std::int64_t bytes = (read_bytes + 3) / 4 * 4;
    std::vector<std::uint16_t> draws(std::size_t{1} << kDrawBits);
    std::mt19937 generator(2024);
    std::normal_distribution<float> normal(0.0f, 1.0f);
    for (std::uint16_t& half : draws) half = normal_half(generator, normal);
    read_ = backend_.allocate(bytes);
    // Each half picks one of the draws: a cheap fill (drawing each half took 8 s per 100 MiB
    // under the sanitizers), with the draws' distribution.
    std::vector<std::uint16_t> piece(static_cast<std::size_t>(std::min(bytes, kPieceBytes) / 2));
    for (std::int64_t offset = 0; offset < bytes; offset += kPieceBytes) {
      const std::int64_t length = std::min(kPieceBytes, bytes - offset);
      const auto first = static_cast<std::uint64_t>(offset / 2);
      for (std::size_t i = 0; i < static_cast<std::size_t>(length / 2); ++i) piece[i] = draws[draw_at(first + i)];
      backend_.upload(read_.data() + offset, reinterpret_cast<const std::byte*>(piece.data()), length);
    }
  }
  if (write_bytes > write_.bytes()) {
    write_ = backend_.allocate(write_bytes);
    // Written once now, so that no timed op is the first to touch a page of it (on the CPU, a
    // fresh page faults on its first write: timed ops would count the kernel's zeroing of it).
    const std::vector<std::byte> zeros(static_cast<std::size_t>(std::min(write_bytes, kPieceBytes)));
    for (std::int64_t offset = 0; offset < write_bytes; offset += kPieceBytes) {
      backend_.upload(write_.data() + offset, zeros.data(), std::min(kPieceBytes, write_bytes - offset));
    }
  }
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
