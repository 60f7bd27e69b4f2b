#pragma once

#include <string>
#include <vector>

#include "simulator/core/enum_names.hpp"
#include "simulator/core/input_error.hpp"

namespace weft::cli {

// The values of a comma-separated flag such as "--dtypes bf16,fp32"; throws InputError naming
// the flag and the value it does not know.
template <class Enum, std::size_t N>
std::vector<Enum> parse_list_flag(const std::string& flag, const std::string& text, const EnumNames<Enum, N>& names) {
  std::vector<Enum> values;
  std::size_t begin = 0;
  while (begin <= text.size()) {
    const std::size_t end = std::min(text.find(',', begin), text.size());
    const std::string item = text.substr(begin, end - begin);
    const auto value = names.parse(item);
    if (!value) throw InputError(flag + ": '" + item + "' is not one of " + names.choices());
    values.push_back(*value);
    begin = end + 1;
  }
  return values;
}

}  // namespace weft::cli
