#include "tools/weft/mpi_command.hpp"

#include <algorithm>
#include <exception>
#include <thread>

#include <fmt/format.h>

#include "simulator/core/input_error.hpp"

namespace weft::cli {

void run_on_ranks(const std::function<void(cpu::MpiJob&)>& prepare, const std::function<void(cpu::MpiJob&)>& run) {
  cpu::MpiJob job;
  try {
    prepare(job);
  } catch (const InputError&) {
    if (job.rank() == 0) throw;
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

int default_threads(const cpu::MpiJob& job) {
  const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  return std::max(1, cores / job.local_size());
}

}  // namespace weft::cli
