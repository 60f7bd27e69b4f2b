#pragma once

// Arithmetic on sizes that come from input: products that saturate instead of overflowing, and
// conversions that refuse a value out of the target's range with an InputError naming it.

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <string>
#include <string_view>

#include "simulator/core/input_error.hpp"

namespace weft {

// A double for a message, to six significant digits.
inline std::string shortest(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%g", value);
  return text;
}

// a x b for a, b >= 0, or INT64_MAX where the product does not fit.
constexpr std::int64_t saturating_mul(std::int64_t a, std::int64_t b) {
  std::int64_t product = 0;
  if (__builtin_mul_overflow(a, b, &product)) return std::numeric_limits<std::int64_t>::max();
  return product;
}

// a + b for a, b >= 0, or INT64_MAX where the sum does not fit.
constexpr std::int64_t saturating_add(std::int64_t a, std::int64_t b) {
  std::int64_t sum = 0;
  if (__builtin_add_overflow(a, b, &sum)) return std::numeric_limits<std::int64_t>::max();
  return sum;
}

// `value` as an int; `what` names it in the error when it does not fit.
inline int checked_int(std::int64_t value, std::string_view what) {
  if (value < std::numeric_limits<int>::min() || value > std::numeric_limits<int>::max()) {
    throw InputError(std::string(what) + ": " + std::to_string(value) + " is out of range (expected at most " +
                     std::to_string(std::numeric_limits<int>::max()) + ")");
  }
  return static_cast<int>(value);
}

// A finite, non-negative `value` scaled by `unit` as a whole number, refused (naming `what`) when the
// result would not fit an int64: converting such a double is undefined behaviour.
inline std::int64_t checked_scaled_int64(double value, double unit, std::string_view what) {
  // 2^63 is exactly representable; every double below it converts.
  constexpr double kLimit = 9223372036854775808.0;
  const double scaled = value * unit;
  if (!std::isfinite(scaled) || scaled < 0.0 || scaled >= kLimit) {
    throw InputError(std::string(what) + ": " + shortest(value) + " is out of range (expected 0 to " +
                     shortest(kLimit / unit) + ")");
  }
  return static_cast<std::int64_t>(scaled);
}

}  // namespace weft
