#include "simulator/workload/pipeline_layer_steps.hpp"

#include "simulator/workload/multimodal_model.hpp"

namespace weft {

PipelineLayerSteps pipeline_layer_steps(const TrainingScenario& scenario, bool head_shares_embedding) {
  const MultimodalModel model(scenario.model, scenario.parallel.cp_algorithm);
  const ShardContext context = scenario.shard_context();
  const int layers = model.layer_count();
  PipelineLayerSteps out;
  out.steps.resize(static_cast<std::size_t>(layers));
  out.blocks.resize(static_cast<std::size_t>(layers));
  for (int layer = 0; layer < layers; ++layer) {
    const auto at = static_cast<std::size_t>(layer);
    model.append_steps(context, scenario.training.sample(), {layer, layer + 1, layer == 0, layer + 1 == layers},
                       head_shares_embedding, out.steps[at], out.blocks[at]);
  }
  return out;
}

}  // namespace weft
