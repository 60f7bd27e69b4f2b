#include "kernels/cpu/cpu_device.hpp"

#include <mpi.h>
#include <unistd.h>

#include <fstream>
#include <string>

#include <fmt/format.h>
#include <Eigen/Core>

namespace weft::cpu {
namespace {

std::string cpu_model() {
  std::ifstream cpuinfo("/proc/cpuinfo");
  std::string line;
  while (std::getline(cpuinfo, line)) {
    if (line.rfind("model name", 0) != 0) continue;
    const auto colon = line.find(':');
    if (colon != std::string::npos) return line.substr(line.find_first_not_of(" \t", colon + 1));
  }
  return "unknown CPU";
}

// The first line of MPI's own description, e.g. "Open MPI v4.1.4".
std::string mpi_version() {
  char text[MPI_MAX_LIBRARY_VERSION_STRING];
  int length = 0;
  MPI_Get_library_version(text, &length);
  std::string version(text, static_cast<std::size_t>(length));
  return version.substr(0, version.find_first_of(",\n"));
}

}  // namespace

BackendDevice describe_cpu(int threads, int ranks_per_node) {
  BackendDevice info;
  info.backend = "cpu";
  info.name = fmt::format("{}, {} thread{}", cpu_model(), threads, threads == 1 ? "" : "s");
  info.libraries = {
      {"eigen", fmt::format("{}.{}.{}", EIGEN_WORLD_VERSION, EIGEN_MAJOR_VERSION, EIGEN_MINOR_VERSION)},
      {"openmp", std::to_string(_OPENMP)},
      {"mpi", mpi_version()},
      {"compiler", __VERSION__},
  };
  info.dtypes = {Dtype::fp32, Dtype::bf16, Dtype::fp16};
  info.memory_bytes = static_cast<std::int64_t>(sysconf(_SC_PHYS_PAGES)) * sysconf(_SC_PAGESIZE) / ranks_per_node;
  info.timing = "the host's steady clock";
  return info;
}

}  // namespace weft::cpu
