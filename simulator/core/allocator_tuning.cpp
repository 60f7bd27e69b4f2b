#include "simulator/core/allocator_tuning.hpp"

#include <malloc.h>

namespace weft {

void keep_freed_memory_for_reuse() {
  // Blocks up to 1 GiB come from the heap rather than from mmap, and the heap is not trimmed
  // below 1 GiB of free space. Memory stays with the process until it exits.
  constexpr int kOneGiB = 1 << 30;
  mallopt(M_MMAP_THRESHOLD, kOneGiB);
  mallopt(M_TRIM_THRESHOLD, kOneGiB);
}

}  // namespace weft
