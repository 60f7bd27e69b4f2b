#include "tools/weft/mpi_command.hpp"

#include <algorithm>
#include <exception>
#include <thread>

#include <fmt/format.h>

#include "simulator/core/input_error.hpp"
#include "tools/weft/flag_checks.hpp"

namespace weft::cli {

void run_on_ranks(const std::function<void(cpu::MpiJob&)>& prepare, const std::function<void(cpu::MpiJob&)>& run) {
  cpu::MpiJob job;
  try {
    prepare(job);
  } catch (const InputError& error) {
    if (job.size() == 1) throw;
    // Every rank reached this verdict (prepare's contract). The others wait until rank 0 has
    // said it: mpirun ends the job, unflushed output and all, when the first rank exits.
    if (job.rank() == 0) {
      fmt::print(stderr, "weft: error: {}\n", error.what());
      std::fflush(stderr);
    }
    job.world().barrier();
    throw QuietExit{2};
  }
  try {
    run(job);
  } catch (const std::exception& error) {
    if (job.size() == 1) throw;
    const bool input = dynamic_cast<const InputError*>(&error) != nullptr;
    fmt::print(stderr, "weft: {}: rank {}: {}\n", input ? "error" : "internal error", job.rank(), error.what());
    std::fflush(stderr);
    cpu::MpiJob::abort(input ? 2 : 1);
  }
}

void add_rank_flags(CLI::App& command, RankFlags& flags) {
  command
      .add_option("--backend", flags.backend,
                  "cpu (Eigen, MPI) or cuda (cuBLASLt, cuDNN attention, weft's kernels, NCCL, CUPTI)")
      ->type_name("NAME");
  command
      .add_option("--threads", flags.threads, "cpu: kernel threads per rank (default: the node's cores / its ranks)")
      ->type_name("T")
      ->check(integer_from(1, kMaxThreads));
  command
      .add_option("--timeout", flags.timeout_s,
                  "Seconds a rank waits for a communication op before it ends the job with an error (default 120)")
      ->type_name("S");
}

BackendOptions backend_options(const RankFlags& flags, const cpu::MpiJob& job) {
  const auto kind = kBackendKindNames.parse(flags.backend);
  if (!kind) throw InputError("--backend: '" + flags.backend + "' is not one of " + kBackendKindNames.choices());
  const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  const int threads = flags.threads > 0 ? flags.threads : std::max(1, cores / job.local_size());
  return {*kind, threads, job.local_rank(), job.local_size()};
}

std::chrono::seconds timeout(const RankFlags& flags) {
  if (flags.timeout_s <= 0) throw InputError("--timeout: expected a positive number of seconds");
  return std::chrono::seconds(flags.timeout_s);
}

}  // namespace weft::cli
