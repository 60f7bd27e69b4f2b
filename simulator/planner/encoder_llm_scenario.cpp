#include "simulator/planner/encoder_llm_scenario.hpp"

#include <string>

#include "simulator/core/input_error.hpp"

namespace weft {

void check_encoder_llm_scenario(const TrainingScenario& scenario, std::string_view planner) {
  const std::string who(planner);
  const MultimodalSpec& spec = scenario.model;
  if (!spec.multimodal() || spec.modules.back().projector || spec.modules.back().tokens != TokenSource::text)
    throw InputError("model: " + who +
                     " plans an encoder component and a language model; expected a model of several modules whose "
                     "last reads text");
  if (scenario.parallel.cp != 1) throw InputError("parallel.cp: " + who + "'s runs here split no sequence; expected 1");
  if (!scenario.data)
    throw InputError("data: " + who +
                     " balances per-sample work; the scenario needs a \"data\" section (a dataset or a samples file)");
}

}  // namespace weft
