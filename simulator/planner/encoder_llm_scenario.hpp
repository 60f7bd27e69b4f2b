#pragma once

#include <string_view>

#include "simulator/workload/training_scenario.hpp"

namespace weft {

// What the planners of an encoder component and an LLM (weft entrain, weft dflop) ask of a
// scenario: a model of several modules whose last reads text, no context parallelism, and
// per-sample data. InputError naming the field and `planner` otherwise.
void check_encoder_llm_scenario(const TrainingScenario& scenario, std::string_view planner);

}  // namespace weft
