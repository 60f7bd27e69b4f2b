#pragma once

#include <cstdint>
#include <limits>

#include <CLI/CLI.hpp>

namespace weft::cli {

// Validators for numeric flags. Each rejects what is not a number of its kind, or lies outside its
// bounds, with a message that says what was expected and what was given ("--top: expected an
// integer of at least 1, got '-1'"). CLI11's own ranges let NaN through, and print the limits of a
// double for a positive number.

// A decimal integer in [least, most].
CLI::Validator integer_from(std::int64_t least, std::int64_t most = std::numeric_limits<std::int64_t>::max());

// A finite number in [least, most].
CLI::Validator number_from(double least, double most);

// A finite number above 0.
CLI::Validator positive_number();

// The most threads a command may be asked for: more than any machine weft runs on has cores, and
// far below the counts at which the thread pool fails to start its workers.
inline constexpr std::int64_t kMaxThreads = 1024;

}  // namespace weft::cli
