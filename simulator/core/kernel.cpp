#include "simulator/core/kernel.hpp"

#include <string>

namespace weft {

Kernel read_kernel(const JsonCursor& json, OpClass op_class) {
  const auto kernel = kKernelNames.parse(json.as_string());
  if (kernel && kernel_fits_class(*kernel, op_class)) return *kernel;
  std::string expected;
  for (std::size_t i = 0; i < kKernelNames.size(); ++i) {
    const auto candidate = static_cast<Kernel>(i);
    if (!kernel_fits_class(candidate, op_class)) continue;
    expected += (expected.empty() ? "" : ", ") + std::string(kKernelNames.name(candidate));
  }
  json.fail("'" + json.as_string() + "' is not a kernel of " + std::string(kOpClassNames.name(op_class)) +
            " ops (expected one of " + expected + ")");
}

}  // namespace weft
