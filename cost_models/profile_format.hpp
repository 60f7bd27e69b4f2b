#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "cost_models/calibrated_cost_model.hpp"
#include "simulator/core/json_cursor.hpp"

namespace weft::profile_format {

// The profile file (docs/calibration.md, profile files) that `weft calibrate` writes.
inline constexpr std::string_view kFormat = "weft-profile";
// Version 2 added GEMM layouts and points, attention kernels and memory-bound kernel tables.
inline constexpr int kVersion = 2;

// A host that takes longer than this to issue one op is a profile gone wrong.
inline constexpr double kMaxHostIssueUs = 1e4;

inline const std::vector<std::string> kGemmAxes = {"m", "n", "k"};
inline const std::vector<std::string> kAttentionAxes = {"batch_heads", "sequence", "head_dim"};
inline const std::vector<std::string> kMemoryAxes = {"bytes"};
inline const std::vector<std::string> kKernelRowAxes = {"rows", "width"};
inline const std::vector<std::string> kKernelParameterAxes = {"parameters"};

// The axes of a memory-bound kernel's table: the optimizer's over parameters, the others' over the
// op's rows and width.
inline const std::vector<std::string>& memory_kernel_axes(Kernel kernel) {
  return kernel_class(kernel) == OpClass::optimizer ? kKernelParameterAxes : kKernelRowAxes;
}

}  // namespace weft::profile_format

namespace weft {

// Reads a profile file, checking every field; errors name the JSON path.
std::shared_ptr<const CalibratedCostModel> read_profile(const JsonCursor& root);

// A bundled profile by name (scenarios/profiles/<name>.json), as a cluster spec names it.
std::shared_ptr<const CalibratedCostModel> load_bundled_profile(const JsonCursor& name);

}  // namespace weft
