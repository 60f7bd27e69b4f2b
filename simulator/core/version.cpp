#include "simulator/core/version.hpp"

namespace weft {

std::string_view version() { return WEFT_VERSION; }

}  // namespace weft
