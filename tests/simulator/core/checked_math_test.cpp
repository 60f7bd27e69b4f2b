#include "simulator/core/checked_math.hpp"

#include <catch2/catch.hpp>

#include <limits>

namespace weft {
namespace {

using Catch::Matchers::Equals;
constexpr std::int64_t kMax = std::numeric_limits<std::int64_t>::max();

TEST_CASE("saturating arithmetic stops at INT64_MAX instead of wrapping", "[core][overflow]") {
  CHECK(saturating_mul(3, 7) == 21);
  CHECK(saturating_mul(std::int64_t{1} << 31, std::int64_t{1} << 31) == std::int64_t{1} << 62);
  CHECK(saturating_mul(std::int64_t{1} << 32, std::int64_t{1} << 31) == kMax);
  CHECK(saturating_mul(kMax, 2) == kMax);
  CHECK(saturating_add(kMax - 1, 1) == kMax);
  CHECK(saturating_add(kMax, kMax) == kMax);
}

TEST_CASE("narrowing conversions refuse values out of range", "[core][overflow]") {
  CHECK(checked_int(2147483647, "x") == 2147483647);
  CHECK_THROWS_WITH(checked_int(2147483648, "microbatches"),
                    Equals("microbatches: 2147483648 is out of range (expected at most 2147483647)"));
  CHECK(checked_scaled_int64(1.5, 1024.0, "x") == 1536);
  CHECK_THROWS_WITH(checked_scaled_int64(1e10, 1073741824.0, "--memory-limit-gib"),
                    Equals("--memory-limit-gib: 1e+10 is out of range (expected 0 to 8.58993e+09)"));
  CHECK_THROWS_WITH(checked_scaled_int64(-1.0, 1.0, "x"), Equals("x: -1 is out of range (expected 0 to 9.22337e+18)"));
  CHECK_THROWS(checked_scaled_int64(std::numeric_limits<double>::infinity(), 1.0, "x"));
  CHECK_THROWS(checked_scaled_int64(std::numeric_limits<double>::quiet_NaN(), 1.0, "x"));
}

}  // namespace
}  // namespace weft
