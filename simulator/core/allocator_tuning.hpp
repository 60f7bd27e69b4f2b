#pragma once

namespace weft {

// Makes glibc serve and keep large blocks on the process heap instead of mapping and unmapping
// each one. Simulations allocate hundreds of megabytes of per-op state and free it again; with the
// default settings every run faults all of those pages in afresh, which on virtual machines costs
// more than the simulation itself. Call once at the start of a process (the CLI and benchmarks do).
void keep_freed_memory_for_reuse();

}  // namespace weft
