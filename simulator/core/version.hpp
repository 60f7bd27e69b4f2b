#pragma once

#include <string_view>

namespace weft {

// The product version, from the CMake project.
std::string_view version();

}  // namespace weft
