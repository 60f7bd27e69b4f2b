#pragma once

#include <string_view>
#include <vector>

namespace weft {

// The parts of `text` between `separator`s: "a,,b" gives "a", "", "b"; "" gives one empty part.
inline std::vector<std::string_view> split_text(std::string_view text, char separator) {
  std::vector<std::string_view> parts;
  while (true) {
    const std::size_t at = text.find(separator);
    parts.push_back(text.substr(0, at));
    if (at == std::string_view::npos) return parts;
    text.remove_prefix(at + 1);
  }
}

}  // namespace weft
