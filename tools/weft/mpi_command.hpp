#pragma once

#include <functional>

#include "kernels/cpu/mpi_job.hpp"

namespace weft::cli {

// Thrown on ranks other than 0 when every rank found the same bad input: rank 0 reports it,
// the others end with its exit status and say nothing.
struct QuietExit {
  int code = 2;
};

// Runs a command on every rank of an MPI job (one rank when weft is not under mpirun).
// `prepare` checks the input and must reach the same verdict on every rank: on an error rank 0
// reports it and every rank exits 2. An error in `run` is reported by the rank it happens on
// ("rank N: ...") and ends every rank of the job (MPI_Abort) with 2 for bad input and 1
// otherwise, so that no rank waits forever for one that is gone.
void run_on_ranks(const std::function<void(cpu::MpiJob&)>& prepare, const std::function<void(cpu::MpiJob&)>& run);

// Threads per rank when the user did not say: the cores of the node shared among its ranks.
int default_threads(const cpu::MpiJob& job);

}  // namespace weft::cli
