#pragma once

// What every harness shares: the fuzzer's bytes read as the JSON document a loader takes. Bad
// input must end in an InputError (the CLI's exit 2); any other exception, a crash, a leak or a
// sanitizer report is a finding.

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "simulator/core/input_error.hpp"
#include "simulator/core/json_cursor.hpp"

namespace weft::fuzz {

// Ops a harness lets a graph hold: enough for every seed's small cases, few enough that one
// input runs in milliseconds.
inline constexpr std::int64_t kMaxOps = 20'000;

inline std::string_view text_of(const std::uint8_t* data, std::size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

template <class Load>
int load_json(const std::uint8_t* data, std::size_t size, Load&& load) {
  try {
    const JsonDocument document = JsonDocument::parse_text(text_of(data, size), "fuzz.json");
    load(document.root());
  } catch (const InputError&) {
  }
  return 0;
}

}  // namespace weft::fuzz
