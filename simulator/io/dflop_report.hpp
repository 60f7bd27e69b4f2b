#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "simulator/planner/dflop/dflop_planner.hpp"

namespace weft {

// The text `weft dflop` prints: the profiles, Algorithm 1's choice and the baselines' tuned
// uniform layout, the scheduler per batch, and the runs with the time each step of DFLOP took.
// `subject` names the scenario, model and cluster.
std::string render_dflop_report(const std::string& subject, const dflop::DflopReport& report);

// The same as JSON. The wall-clock times (`timings_ms`, each batch's `solve_ms`) differ run to run.
nlohmann::json dflop_json(const std::string& scenario, const dflop::DflopReport& report);

}  // namespace weft
