#pragma once

#include "kernels/backend.hpp"

namespace weft::cpu {

// This CPU as the CPU backend runs on it with `threads` threads per rank: its model name (from
// /proc/cpuinfo), the versions of Eigen, OpenMP, MPI and the compiler, and the memory of one of
// `ranks_per_node` ranks (an equal share of the machine's).
BackendDevice describe_cpu(int threads, int ranks_per_node);

}  // namespace weft::cpu
