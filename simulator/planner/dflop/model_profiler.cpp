#include "simulator/planner/dflop/model_profiler.hpp"

#include <algorithm>
#include <cmath>

#include "simulator/planner/dip/dip_planner.hpp"
#include "simulator/workload/training_workload.hpp"

namespace weft::dflop {
namespace {

bool divides_module(const ModuleSpec& module, int tp) {
  if (module.projector) return module.projector->ffn_hidden % tp == 0;
  const ModelSpec& m = module.model;
  return m.heads % tp == 0 && m.kv_heads % tp == 0 && m.ffn_hidden % tp == 0;
}

// 1, 2, 4, ... up to the first at least `last`.
std::vector<std::int64_t> doubling_grid(std::int64_t first, std::int64_t last) {
  std::vector<std::int64_t> out{first};
  while (out.back() < last) out.push_back(out.back() * 2);
  return out;
}

std::vector<double> as_doubles(const std::vector<std::int64_t>& values) { return {values.begin(), values.end()}; }

}  // namespace

ModelCosts::ModelCosts(const TrainingScenario& scenario)
    : scenario_(scenario),
      model_(scenario.model, scenario.parallel.cp_algorithm),
      policy_(dip::layer_policy(scenario)),
      encoder_layers_(scenario.model.first_layer(scenario.model.modules.size() - 1)) {}

std::pair<int, int> ModelCosts::layer_range(Component component) const {
  return component == Component::encoder ? std::pair{0, encoder_layers_} : std::pair{encoder_layers_, layers()};
}

std::vector<int> ModelCosts::tp_degrees(Component component) const {
  const std::vector<ModuleSpec>& modules = scenario_.model.modules;
  const std::size_t last = modules.size() - 1;
  std::vector<int> out;
  for (int tp = 1; tp <= scenario_.cluster.gpus_per_node; ++tp) {
    if (scenario_.cluster.gpus_per_node % tp != 0) continue;
    bool fits = true;
    for (std::size_t m = 0; m < modules.size(); ++m) {
      if ((m == last) == (component == Component::llm)) fits = fits && divides_module(modules[m], tp);
    }
    if (fits) out.push_back(tp);
  }
  return out;
}

dip::LayerCosts& ModelCosts::at_tp(int tp) {
  auto& costs = by_tp_[tp];
  if (!costs) {
    ShardContext base = scenario_.shard_context();
    base.tp = tp;
    base.cp = 1;
    base.sequence_parallel = scenario_.parallel.sequence_parallel && tp > 1;
    base.micro_batch = 1;
    costs = std::make_unique<dip::LayerCosts>(model_, base, scenario_.cluster, scenario_.options.ideal_network);
  }
  return *costs;
}

dip::LayerCosts& ModelCosts::mesh(int tp, int dp) {
  auto& costs = transfers_[{tp, dp}];
  if (!costs) {
    ShardContext base = scenario_.shard_context();
    base.tp = tp;
    base.cp = 1;
    costs = std::make_unique<dip::LayerCosts>(model_, base, scenario_.cluster, scenario_.options.ideal_network, dp);
  }
  return *costs;
}

TimeNs ModelCosts::transfer_time(int tp, int dp, int from, int to, Bytes bytes) {
  return mesh(tp, dp).transfer_time(from, to, bytes);
}

TimeNs ModelCosts::gradient_reduce_time(int tp, int dp, int stage, Bytes bytes) {
  return mesh(tp, dp).data_parallel_allreduce_time(stage, bytes);
}

LayerSplit split_layer(const dip::LayerCost& cost, dip::LayerPolicy policy) {
  LayerSplit out;
  // Selective and full recompute both rerun the attention core's forward before its backward.
  const bool recomputed = policy != dip::LayerPolicy::keep;
  out.attention_forward = cost.attention_forward;
  out.attention_backward = cost.attention_backward + (recomputed ? cost.attention_forward : 0);
  out.forward = cost.forward - cost.attention_forward;
  out.backward = cost.latency(policy) - cost.forward - out.attention_backward;
  out.attention_flops = cost.attention_flops;
  out.flops = cost.training_flops - cost.attention_flops;
  return out;
}

Bytes ComponentProfile::model_state_bytes(int layers_held) const {
  return static_cast<Bytes>(std::llround(model_state.at(layers_held)));
}

Bytes ComponentProfile::activation_bytes(int layers_held, double units) const {
  return static_cast<Bytes>(std::llround(layers_held * units * activations_per_unit.at(units)));
}

ModelProfile profile_model(ModelCosts& costs, const ProfileGrid& grid) {
  const TrainingScenario& s = costs.scenario();
  // DFLOP's framework keeps every rank's model states whole (data parallelism, no sharding).
  TrainingScenario unsharded = s;
  unsharded.parallel.zero = 0;
  const std::vector<std::int64_t> images = doubling_grid(1, grid.max_images);
  const std::vector<std::int64_t> tokens = doubling_grid(grid.min_tokens, grid.max_tokens);
  ModelProfile out;
  for (const Component component : {Component::encoder, Component::llm}) {
    const auto [first, end] = costs.layer_range(component);
    const bool encoder = component == Component::encoder;
    const std::vector<std::int64_t>& sizes = encoder ? images : tokens;
    auto shape = [&](std::int64_t size) {
      return encoder ? SampleShape{grid.min_tokens, size, 0.0, 0.0} : SampleShape{size, 0, 0.0, 0.0};
    };
    for (const int tp : costs.tp_degrees(component)) {
      dip::LayerCosts& layers = costs.at_tp(tp);
      ComponentProfile profile;
      profile.tp = tp;
      profile.layers = end - first;
      std::int64_t parameters = 0;
      std::int64_t trained = 0;
      for (int layer = first; layer < end; ++layer) {
        parameters += layers.at(layer, kOneOfEach).parameters;
        trained += layers.at(layer, kOneOfEach).trained;
      }
      const double per_layer = 1.0 / profile.layers;
      const double one =
          static_cast<double>(rank_static_memory(unsharded, std::llround(static_cast<double>(parameters) * per_layer),
                                                 std::llround(static_cast<double>(trained) * per_layer), 0)
                                  .total());
      const double all = static_cast<double>(rank_static_memory(unsharded, parameters, trained, 0).total());
      profile.model_state = profile.layers > 1 ? PiecewiseLinear({1.0, static_cast<double>(profile.layers)}, {one, all})
                                               : PiecewiseLinear({1.0}, {all});
      std::vector<double> throughput, attention, activations;
      for (const std::int64_t size : sizes) {
        TimeNs time = 0;
        TimeNs attention_time = 0;
        double flops = 0.0;
        double attention_flops = 0.0;
        Bytes kept = 0;
        for (int layer = first; layer < end; ++layer) {
          const dip::LayerCost& cost = layers.in_stage(layer, shape(size));
          const LayerSplit split = split_layer(cost, costs.policy());
          kept += cost.memory(costs.policy());
          ++out.measurements;
          if (encoder) {
            time += cost.latency(costs.policy());
            flops += cost.training_flops;
            continue;
          }
          time += split.forward + split.backward;
          attention_time += split.attention_forward + split.attention_backward;
          flops += split.flops;
          attention_flops += split.attention_flops;
        }
        throughput.push_back(flops / (static_cast<double>(time) / kNsPerSecond));
        if (!encoder) attention.push_back(attention_flops / (static_cast<double>(attention_time) / kNsPerSecond));
        activations.push_back(static_cast<double>(kept) * per_layer / static_cast<double>(size));
      }
      profile.throughput = PiecewiseLinear(as_doubles(sizes), throughput);
      if (!encoder) profile.attention_throughput = PiecewiseLinear(as_doubles(sizes), attention);
      profile.activations_per_unit = PiecewiseLinear(as_doubles(sizes), activations);
      (encoder ? out.encoder : out.llm).push_back(std::move(profile));
    }
  }
  // The whole model's FLOPs, from TP 1: an image's through the encoder, a token's through the
  // LLM's linear layers, and the attention of a sequence (quadratic in its length).
  dip::LayerCosts& whole = costs.at_tp(1);
  const auto [encoder_first, encoder_end] = costs.layer_range(Component::encoder);
  const auto [llm_first, llm_end] = costs.layer_range(Component::llm);
  for (int layer = encoder_first; layer < encoder_end; ++layer)
    out.flops.encoder_per_image += whole.in_stage(layer, {grid.min_tokens, 1, 0.0, 0.0}).training_flops;
  const std::int64_t reference = tokens.back();
  for (int layer = llm_first; layer < llm_end; ++layer) {
    const LayerSplit split = split_layer(whole.in_stage(layer, {reference, 0, 0.0, 0.0}), costs.policy());
    out.flops.llm_linear_per_token += split.flops / static_cast<double>(reference);
    out.flops.llm_attention_per_token_squared +=
        split.attention_flops / (static_cast<double>(reference) * static_cast<double>(reference));
  }
  return out;
}

}  // namespace weft::dflop
