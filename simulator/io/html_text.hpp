#pragma once

#include <string>
#include <string_view>

namespace weft {

// `text` with &, <, > and " escaped, for HTML text and attribute values.
std::string html_escape(std::string_view text);

}  // namespace weft
