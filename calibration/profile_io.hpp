#pragma once

#include <nlohmann/json.hpp>

#include "calibration/calibrate.hpp"
#include "cost_models/profile_format.hpp"

namespace weft {

// The profile file (docs/calibration.md, profile files): the fitted model, where it came from,
// and its held-out errors against the default model. read_profile (cost_models/profile_format.hpp)
// reads it back.
nlohmann::json profile_json(const Calibration& calibration, const std::string& created);

}  // namespace weft
