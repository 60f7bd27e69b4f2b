#include "simulator/workload/context_parallel/attention_layer_cost.hpp"

#include <catch2/catch.hpp>

#include "cost_models/cluster_cost_model.hpp"
#include "simulator/core/json_cursor.hpp"
#include "simulator/workload/training_scenario.hpp"
#include "tests/support/cli_expectations.hpp"

namespace weft {
namespace {

TrainingScenario cornstarch_scenario() {
  const JsonDocument document = JsonDocument::parse_file(test::experiment("cornstarch-llama3-70b-cp8-64xa40"));
  return load_training_scenario(document.root(), nullptr);
}

TEST_CASE("a rank holding a mask's every tile costs the dense bidirectional layer", "[context_parallel]") {
  const TrainingScenario scenario = cornstarch_scenario();
  const ClusterCostModel cost(scenario.cluster);
  ModelSpec model = scenario.model.single();
  const std::int64_t tokens = 4096;
  const AttentionLayerCost layer(model, scenario.shard_context(), tokens, 128, false, cost, scenario.cluster.gpu);
  const LayerTime masked = layer.rank_time({tokens, (tokens / 128) * (tokens / 128)});

  // The same layer of an encoder (attention not causal) over the sequence, op by op.
  model.kind = ModelKind::encoder;
  ShardContext context = scenario.shard_context();
  context.cp = 1;
  context.seq_len = tokens;
  std::vector<Step> steps;
  SelfAttention("attention", model, ContextParallelAlgorithm::allgather).emit(context, "", steps);
  TimeNs forward = 0;
  TimeNs backward = 0;
  for (const Step& step : steps) {
    if (step.comm) continue;
    if (step.forward) forward += cost.duration(*step.forward, scenario.cluster.gpu);
    if (step.backward) backward += cost.duration(*step.backward, scenario.cluster.gpu);
    if (step.weight_grad) backward += cost.duration(*step.weight_grad, scenario.cluster.gpu);
  }
  CHECK(masked.forward == forward);
  CHECK(masked.backward == backward);
}

TEST_CASE("a rank's attention grows with its tiles, its projections with its tokens", "[context_parallel]") {
  TrainingScenario scenario = cornstarch_scenario();
  scenario.cluster.calibration = nullptr;  // the roofline: time in proportion to FLOPs
  const ClusterCostModel cost(scenario.cluster);
  const AttentionLayerCost layer(scenario.model.single(), scenario.shard_context(), 65536, 128, false, cost,
                                 scenario.cluster.gpu);
  const TimeNs one = layer.rank_time({8192, 10000}).forward;
  const TimeNs two = layer.rank_time({8192, 20000}).forward;
  const TimeNs three = layer.rank_time({8192, 30000}).forward;
  CHECK(two > one);
  CHECK(std::abs((three - two) - (two - one)) <= 2);     // linear in the tiles, to the rounding
  CHECK(layer.rank_time({16384, 20000}).forward > two);  // twice the tokens: more projection
  CHECK(layer.rank_time({0, 0}).forward == 0);
}

}  // namespace
}  // namespace weft
