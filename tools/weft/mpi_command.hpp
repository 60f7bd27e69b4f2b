#pragma once

#include <chrono>
#include <functional>
#include <string>

#include <CLI/CLI.hpp>

#include "kernels/backend_factory.hpp"
#include "kernels/cpu/mpi_job.hpp"

namespace weft::cli {

// Thrown when every rank of a job found the same bad input, after rank 0 reported it: each
// rank ends with this status and says nothing more.
struct QuietExit {
  int code = 2;
};

// Runs a command on every rank of an MPI job (one rank when weft is not under mpirun).
// `prepare` checks the input and must reach the same verdict on every rank: on an error rank 0
// reports it and every rank exits 2. An error in `run` is reported by the rank it happens on
// ("rank N: ...") and ends every rank of the job (MPI_Abort) with 2 for bad input and 1
// otherwise, so that no rank waits forever for one that is gone.
void run_on_ranks(const std::function<void(cpu::MpiJob&)>& prepare, const std::function<void(cpu::MpiJob&)>& run);

// --backend, --threads and --timeout, shared by the commands that run on ranks.
struct RankFlags {
  std::string backend = "cpu";
  int threads = 0;  // 0: the cores of the node shared among its ranks
  int timeout_s = 120;
};

void add_rank_flags(CLI::App& command, RankFlags& flags);

// The backend of this rank of `job`; throws InputError naming the flag that is wrong.
BackendOptions backend_options(const RankFlags& flags, const cpu::MpiJob& job);
std::chrono::seconds timeout(const RankFlags& flags);

}  // namespace weft::cli
