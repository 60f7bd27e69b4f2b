#pragma once

#include <memory>

#include "kernels/backend.hpp"
#include "simulator/core/enum_names.hpp"

namespace weft {

enum class BackendKind : std::uint8_t { cpu, cuda };

inline constexpr EnumNames<BackendKind, 2> kBackendKindNames({"cpu", "cuda"});

struct BackendOptions {
  BackendKind kind = BackendKind::cpu;
  int threads = 1;     // cpu: kernel threads per rank
  int local_rank = 0;  // cuda: which device of the node (local rank mod devices)
  int local_size = 1;  // ranks on the node
};

// The backend a rank runs on; throws InputError when it cannot run here.
std::unique_ptr<Backend> make_backend(const BackendOptions& options);

}  // namespace weft
