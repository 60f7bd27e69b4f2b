#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "simulator/planner/entrain/entrain_planner.hpp"

namespace weft {

// The text `weft entrain` prints: the cost model's fit, Algorithm 2's rounds, the allocations of
// the Bernoulli trials (Table 4.2), Algorithm 3's layouts and the runs of the batch. `subject`
// names the scenario, model and cluster.
std::string render_entrain_report(const std::string& subject, const entrain::EntrainReport& report);

nlohmann::json entrain_json(const std::string& scenario, const entrain::EntrainReport& report);

}  // namespace weft
