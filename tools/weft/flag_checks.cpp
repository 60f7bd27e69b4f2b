#include "tools/weft/flag_checks.hpp"

#include <charconv>
#include <cmath>
#include <optional>
#include <string>

#include <fmt/format.h>

namespace weft::cli {
namespace {

// The value of `text` when the whole of it is one number of type T.
template <class T>
std::optional<T> parse_whole(const std::string& text) {
  T value{};
  const char* end = text.data() + text.size();
  const auto [stop, error] = std::from_chars(text.data(), end, value);
  if (error != std::errc{} || stop != end) return std::nullopt;
  return value;
}

}  // namespace

CLI::Validator integer_from(std::int64_t least, std::int64_t most) {
  const std::string expected = most == std::numeric_limits<std::int64_t>::max()
                                   ? fmt::format("an integer of at least {}", least)
                                   : fmt::format("an integer from {} to {}", least, most);
  return CLI::Validator(
      [=](std::string& text) -> std::string {
        const auto value = parse_whole<std::int64_t>(text);
        if (value && *value >= least && *value <= most) return {};
        return fmt::format("expected {}, got '{}'", expected, text);
      },
      // The help names only the lower bound where the upper one is the integer type's.
      most >= std::numeric_limits<std::int32_t>::max() ? fmt::format(">= {}", least)
                                                       : fmt::format("in [{} - {}]", least, most));
}

CLI::Validator number_from(double least, double most) {
  return CLI::Validator(
      [=](std::string& text) -> std::string {
        const auto value = parse_whole<double>(text);
        if (value && std::isfinite(*value) && *value >= least && *value <= most) return {};
        return fmt::format("expected a number from {:g} to {:g}, got '{}'", least, most, text);
      },
      fmt::format("in [{:g} - {:g}]", least, most));
}

CLI::Validator positive_number() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        const auto value = parse_whole<double>(text);
        if (value && std::isfinite(*value) && *value > 0.0) return {};
        return fmt::format("expected a number above 0, got '{}'", text);
      },
      "> 0");
}

}  // namespace weft::cli
