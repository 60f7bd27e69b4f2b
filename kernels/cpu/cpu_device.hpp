#pragma once

#include "kernels/backend.hpp"

namespace weft::cpu {

// This CPU as the CPU backend runs on it with `threads` threads per rank: its model name (from
// /proc/cpuinfo), and the versions of Eigen, OpenMP, MPI and the compiler.
DeviceInfo describe_cpu(int threads);

}  // namespace weft::cpu
