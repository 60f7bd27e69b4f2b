#include "simulator/core/host_memory.hpp"

#include <unistd.h>

#include <cmath>

namespace weft {

Bytes host_memory_bytes() {
  const long pages = sysconf(_SC_PHYS_PAGES);
  const long page_size = sysconf(_SC_PAGE_SIZE);
  if (pages <= 0 || page_size <= 0) return 16 * kBytesPerGiB;
  return Bytes{pages} * Bytes{page_size};
}

std::string host_memory_text() {
  const auto gib = std::lround(static_cast<double>(host_memory_bytes()) / static_cast<double>(kBytesPerGiB));
  return "this machine's " + std::to_string(gib) + " GiB";
}

}  // namespace weft
