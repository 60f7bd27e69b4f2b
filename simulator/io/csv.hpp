#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace weft {

// `value` with enough digits to read back the same double ("{:.17g}").
std::string csv_number(double value);

// `text` in double quotes, each quote inside doubled (RFC 4180).
std::string csv_quoted(std::string_view text);

// The fields of one CSV line (no line break in it): comma-separated, a field in double quotes
// may hold commas and doubled quotes. Throws InputError for a quote left open or text after a
// closing quote.
std::vector<std::string> split_csv_line(std::string_view line);

}  // namespace weft
