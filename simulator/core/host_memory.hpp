#pragma once

// The memory of the machine weft runs on, for the limits that keep what it reads and builds
// within it.

#include <string>

#include "simulator/core/units.hpp"

namespace weft {

// Physical memory of this machine, or 16 GiB where the system does not say.
Bytes host_memory_bytes();

// "this machine's 24 GiB", for messages about limits drawn from it.
std::string host_memory_text();

}  // namespace weft
