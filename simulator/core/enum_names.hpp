#pragma once

#include <array>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace weft {

// The spelling of each value of a dense enum (values 0..N-1), used for parsing and printing so
// that every enum in scenarios and outputs is named the same way.
template <class Enum, std::size_t N>
class EnumNames {
 public:
  constexpr explicit EnumNames(std::array<std::string_view, N> names) : names_(names) {}

  constexpr std::string_view name(Enum value) const { return names_[static_cast<std::size_t>(value)]; }

  constexpr std::optional<Enum> parse(std::string_view text) const {
    for (std::size_t i = 0; i < N; ++i) {
      if (names_[i] == text) return static_cast<Enum>(i);
    }
    return std::nullopt;
  }

  // "a, b or c": for error messages that list what was expected.
  std::string choices() const {
    std::string out;
    for (std::size_t i = 0; i < N; ++i) {
      if (i > 0) out += (i + 1 == N) ? " or " : ", ";
      out += names_[i];
    }
    return out;
  }

  static constexpr std::size_t size() { return N; }

 private:
  std::array<std::string_view, N> names_;
};

}  // namespace weft
