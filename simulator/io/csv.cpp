#include "simulator/io/csv.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "simulator/core/input_error.hpp"

namespace weft {

std::string csv_number(double value) { return fmt::format("{:.17g}", value); }

std::string csv_quoted(std::string_view text) {
  std::string out = "\"";
  for (char c : text) {
    out += c;
    if (c == '"') out += '"';
  }
  return out + '"';
}

std::vector<std::string> split_csv_line(std::string_view line) {
  std::vector<std::string> fields(1);
  std::size_t i = 0;
  while (i <= line.size()) {
    std::string& field = fields.back();
    if (i < line.size() && line[i] == '"') {
      const std::size_t opened = i++;
      for (;; ++i) {
        if (i >= line.size()) throw InputError(fmt::format("the quote at column {} is never closed", opened + 1));
        if (line[i] != '"') {
          field += line[i];
        } else if (i + 1 < line.size() && line[i + 1] == '"') {
          field += '"';
          ++i;
        } else {
          break;
        }
      }
      ++i;  // past the closing quote: a comma or the end must follow
      if (i < line.size() && line[i] != ',') {
        throw InputError(fmt::format("unexpected text after the quoted field at column {}", i + 1));
      }
    } else {
      const std::size_t comma = std::min(line.find(',', i), line.size());
      field.append(line.substr(i, comma - i));
      i = comma;
    }
    if (i < line.size()) fields.emplace_back();  // at a comma: another field follows
    ++i;
  }
  return fields;
}

}  // namespace weft
