#include <catch2/catch.hpp>

#include "kernels/cpu/cpu_backend.hpp"
#include "kernels/operand_pool.hpp"

namespace weft {
namespace {

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
