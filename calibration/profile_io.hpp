#pragma once

#include <memory>

#include <nlohmann/json.hpp>

#include "calibration/calibrate.hpp"
#include "cost_models/calibrated_cost_model.hpp"
#include "simulator/core/json_cursor.hpp"

namespace weft {

// The profile file (docs/calibration.md, profile files): the fitted model, where it came from,
// and its held-out errors against the default model.
nlohmann::json profile_json(const Calibration& calibration, const std::string& created);

// Reads a profile file, checking every field; errors name the JSON path.
std::shared_ptr<const CalibratedCostModel> read_profile(const JsonCursor& root);

}  // namespace weft
