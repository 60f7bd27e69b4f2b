#include <memory>
#include <string>

#include <fmt/format.h>

#include "kernels/cuda/cuda_backend_loader.hpp"
#include "kernels/cuda/cuda_probe.hpp"
#include "simulator/core/input_error.hpp"
#include "simulator/core/scenario_library.hpp"
#include "simulator/core/version.hpp"
#include "tools/weft/commands.hpp"

namespace weft::cli {
namespace {

struct InfoFlags {
  bool require_cuda = false;
};

void run_info(const InfoFlags& flags) {
  fmt::print("weft {}\n", version());
  fmt::print("scenario library: {}\n", ScenarioLibrary::root().string());
  fmt::print("cpu backend: available\n");
  const cuda::CudaProbe probe = cuda::probe();
  if (!probe.built) {
    fmt::print("cuda backend: not built\n");
  } else {
    fmt::print("cuda backend: built for {}, runtime {}.{}\n", probe.architectures, probe.runtime_version / 1000,
               (probe.runtime_version % 1000) / 10);
    for (const cuda::CudaDeviceInfo& device : probe.devices) {
      fmt::print("  device: {} (sm_{}{}, {} SMs, {:.1f} GiB)\n", device.name, device.compute_capability_major,
                 device.compute_capability_minor, device.multiprocessors,
                 static_cast<double>(device.memory_bytes) / (1 << 30));
    }
    if (probe.kernel_self_test_passed) {
      fmt::print("  kernel self-test: passed\n");
      fmt::print("  GEMM check: {}\n", cuda::check_cuda_gemm().second);
      fmt::print("  attention check: {}\n", cuda::check_cuda_attention().second);
    }
  }
  if (!probe.error.empty()) fmt::print("cuda: {}\n", probe.error);
  if (flags.require_cuda && !probe.error.empty()) throw InputError("--require-cuda: " + probe.error);
}

}  // namespace

void add_info_command(CLI::App& app) {
  auto flags = std::make_shared<InfoFlags>();
  CLI::App* command = app.add_subcommand(
      "info", "Show the version, where named specs are looked up, and which backends can run on this machine.");
  command->add_flag("--require-cuda", flags->require_cuda,
                    "Exit with status 2 unless a CUDA device is present and runs a test kernel");
  command->callback([flags] { run_info(*flags); });
}

}  // namespace weft::cli
