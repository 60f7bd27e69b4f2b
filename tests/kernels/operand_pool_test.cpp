#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <vector>

#include "kernels/cpu/cpu_backend.hpp"
#include "kernels/operand_pool.hpp"

namespace weft {
namespace {

// The 16-bit halves of the read region.
std::vector<std::uint16_t> read_halves(const OperandPool& pool, std::int64_t from, std::int64_t count) {
  std::vector<std::uint16_t> halves(static_cast<std::size_t>(count));
  std::memcpy(halves.data(), pool.read() + from, halves.size() * 2);
  return halves;
}

TEST_CASE("operands are standard normal bf16 values, tame read as fp16 and fp32 too", "[kernels][pool]") {
  cpu::CpuBackend backend(1);
  OperandPool pool(backend);
  pool.reserve(std::int64_t{1} << 20, 16);
  const std::vector<std::uint16_t> halves = read_halves(pool, 0, std::int64_t{1} << 19);
  double sum = 0, squares = 0;
  for (std::size_t i = 0; i < halves.size(); ++i) {
    const std::uint16_t h = halves[i];
    const std::uint32_t bits = static_cast<std::uint32_t>(h) << 16;
    float value = 0;
    std::memcpy(&value, &bits, 4);
    REQUIRE(std::isnormal(value));
    sum += value;
    squares += static_cast<double>(value) * value;
    const unsigned fp16_exponent = (h >> 10) & 0x1Fu;  // the same bits read as fp16
    REQUIRE(fp16_exponent != 0);
    REQUIRE(fp16_exponent != 0x1F);
    if (i % 2 == 1) {  // two halves read as one fp32 word (little-endian: this half on top)
      std::uint32_t word = (static_cast<std::uint32_t>(h) << 16) | halves[i - 1];
      float wide = 0;
      std::memcpy(&wide, &word, 4);
      REQUIRE(std::isnormal(wide));
    }
  }
  const double mean = sum / static_cast<double>(halves.size());
  CHECK(std::abs(mean) < 0.01);
  CHECK(std::sqrt(squares / static_cast<double>(halves.size()) - mean * mean) == Approx(1.0).epsilon(0.01));
}

TEST_CASE("a read region larger than a piece holds operands to its end", "[kernels][pool]") {
  cpu::CpuBackend backend(1);
  OperandPool pool(backend);
  const std::int64_t bytes = (std::int64_t{100} << 20) + 6;
  pool.reserve(bytes, 16);
  const std::vector<std::uint16_t> tail = read_halves(pool, bytes - 4096, 2048);
  for (std::uint16_t h : tail) REQUIRE(((h >> 7) & 0xFFu) != 0);  // a bf16 exponent: not zero or subnormal
  // The region does not repeat itself shifted: not by a piece (64 MiB), by the table of draws
  // (65,536 halves), by the shifts at which a hash that steps linearly repeats it (217,309,
  // 5,398,512 and 18,311,479 halves for the finaliser's first multiply alone), or by one half. Two windows share a
  // value where both picked the same draw or two draws round to the same bf16 (a few percent of pairs).
  const std::vector<std::uint16_t> window = read_halves(pool, 0, 4096);
  for (const std::int64_t shift : {std::int64_t{32} << 20, std::int64_t{1} << 16, std::int64_t{217'309},
                                   std::int64_t{5'398'512}, std::int64_t{18'311'479}, std::int64_t{1}}) {
    const std::int64_t period = 2 * shift;  // in bytes
    const std::vector<std::uint16_t> later = read_halves(pool, period, 4096);
    std::int64_t same = 0;
    for (std::size_t i = 0; i < window.size(); ++i) same += window[i] == later[i] ? 1 : 0;
    INFO("period " << period << " bytes");
    CHECK(same < 4096 / 10);
  }
}

TEST_CASE("without a rotation every op takes the regions' start", "[kernels][pool]") {
  cpu::CpuBackend backend(1);
  OperandPool pool(backend);
  pool.reserve(1000, 500);
  for (int i = 0; i < 3; ++i) {
    const auto operands = pool.take(1000, 500);
    CHECK(operands.read == pool.read());
    CHECK(operands.write == pool.write());
  }
}

TEST_CASE("with a rotation consecutive ops touch fresh memory until the regions wrap", "[kernels][pool]") {
  cpu::CpuBackend backend(1);
  OperandPool pool(backend);
  pool.reserve(1000, 600, 2100);  // regions of 3,100 and 2,700 bytes
  REQUIRE(pool.read_bytes() == 3100);
  REQUIRE(pool.write_bytes() == 2700);
  // Stretches start on 256-byte boundaries: 1,000 bytes read take 1,024, 600 written take 768.
  auto first = pool.take(1000, 600);
  auto second = pool.take(1000, 600);
  CHECK(first.read == pool.read());
  CHECK(first.write == pool.write());
  CHECK(second.read == pool.read() + 1024);
  CHECK(second.write == pool.write() + 768);
  auto third = pool.take(1000, 600);
  CHECK(third.read == pool.read() + 2048);
  CHECK(third.write == pool.write() + 1536);
  // The fourth read would end at 4,072 > 3,100: it wraps; the write (2,304 + 600 > 2,700) too.
  const auto fourth = pool.take(1000, 600);
  CHECK(fourth.read == pool.read());
  CHECK(fourth.write == pool.write());
}

}  // namespace
}  // namespace weft
