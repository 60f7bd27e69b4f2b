#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <utility>
#include <vector>

#include "simulator/planner/dflop/piecewise_linear.hpp"
#include "simulator/planner/dip/layer_costs.hpp"
#include "simulator/workload/training_scenario.hpp"

namespace weft::dflop {

// The two sides DFLOP plans apart: the modality encoder (every module before the last, projector
// included) and the LLM (the last module).
enum class Component : std::uint8_t { encoder, llm };

// weft's per-layer costs of a vision-language model at each TP degree: the ops the simulator
// prices on the scenario's cluster. What DFLOP's Model Profiler measures, and what its runs are
// timed with. Not thread-safe.
class ModelCosts {
 public:
  explicit ModelCosts(const TrainingScenario& scenario);

  const TrainingScenario& scenario() const { return scenario_; }
  const MultimodalModel& model() const { return model_; }
  dip::LayerPolicy policy() const { return policy_; }
  int encoder_layers() const { return encoder_layers_; }
  int layers() const { return model_.layer_count(); }
  // Pipeline layers [first, end) of a component.
  std::pair<int, int> layer_range(Component component) const;
  // TP degrees a component may take: divisors of a node's GPUs that divide its modules' heads,
  // KV heads and FFN widths (and a projector's), increasing.
  std::vector<int> tp_degrees(Component component) const;
  // Per-layer costs of one rank at `tp` (one sample per microbatch: a stage's samples run as one
  // packed sequence, its images as one batch).
  dip::LayerCosts& at_tp(int tp);
  // How long `bytes` take between pipeline ranks `from` and `to` of a mesh of `tp` x `dp` GPUs per
  // stage (ranks placed as Megatron places them).
  TimeNs transfer_time(int tp, int dp, int from, int to, Bytes bytes);
  // How long the all-reduce of `bytes` of gradients takes over the `dp` replicas of pipeline rank
  // `stage` of such a mesh (placed as transfer_time places its ranks).
  TimeNs gradient_reduce_time(int tp, int dp, int stage, Bytes bytes);

 private:
  dip::LayerCosts& mesh(int tp, int dp);

  const TrainingScenario& scenario_;
  MultimodalModel model_;
  dip::LayerPolicy policy_;
  int encoder_layers_ = 0;
  std::map<int, std::unique_ptr<dip::LayerCosts>> by_tp_;
  std::map<std::pair<int, int>, std::unique_ptr<dip::LayerCosts>> transfers_;
};

// A layer's time and FLOPs split as DFLOP's profiler measures the LLM (§3.2.1): its attention core
// over each sequence apart, the rest over the packed sequence. Times under the layer policy (the
// attention forward counted twice when the backward pass recomputes it).
struct LayerSplit {
  TimeNs attention_forward = 0;
  TimeNs attention_backward = 0;  // with any recomputed attention forward
  TimeNs forward = 0;             // the rest of the layer's forward
  TimeNs backward = 0;            // the rest of its backward, with any recomputed forward
  double attention_flops = 0.0;
  double flops = 0.0;  // the rest
};
LayerSplit split_layer(const dip::LayerCost& cost, dip::LayerPolicy policy);

// What DFLOP's Model Profiler measures of one component at one TP degree (papers/003 §3.2.1).
struct ComponentProfile {
  int tp = 1;
  int layers = 0;
  // Bytes a rank holds for the whole iteration (parameters, gradients, optimizer states, overhead)
  // over the layers it holds: model_state(l, tp).
  PiecewiseLinear model_state;
  // Bytes one layer keeps for the backward pass per unit of a microbatch (an image; a packed
  // token), over the microbatch's units: act_state(l, tp, size) = l x size x this(size).
  PiecewiseLinear activations_per_unit;
  // FLOP/s per GPU over the microbatch's size: the encoder's over images (E_thr), the LLM's linear
  // layers over packed tokens (L_lin_thr).
  PiecewiseLinear throughput;
  // The LLM's attention over one sequence's tokens (L_attn_thr); empty for the encoder.
  PiecewiseLinear attention_throughput;

  Bytes model_state_bytes(int layers_held) const;
  Bytes activation_bytes(int layers_held, double units) const;
};

// Training FLOPs of a sample's work on the whole model (Megatron's convention, TP 1).
struct SampleFlops {
  double encoder_per_image = 0.0;
  double llm_linear_per_token = 0.0;
  double llm_attention_per_token_squared = 0.0;  // a sequence of s tokens: this x s^2

  double encoder(std::int64_t images) const { return encoder_per_image * static_cast<double>(images); }
  double llm_linear(std::int64_t tokens) const { return llm_linear_per_token * static_cast<double>(tokens); }
  double llm_attention(std::int64_t tokens) const {
    return llm_attention_per_token_squared * static_cast<double>(tokens) * static_cast<double>(tokens);
  }
};

// The Model Profiler's output: each component at each TP degree it may take.
struct ModelProfile {
  std::vector<ComponentProfile> encoder;  // by TP degree, increasing
  std::vector<ComponentProfile> llm;
  SampleFlops flops;
  std::int64_t measurements = 0;  // (layer, shape) points priced

  const std::vector<ComponentProfile>& of(Component component) const {
    return component == Component::encoder ? encoder : llm;
  }
};

// The sizes the profiler measures at: images 1, 2, 4, ... up to `max_images`; packed tokens
// `min_tokens`, doubled, up to `max_tokens` (the last point at least the maximum).
struct ProfileGrid {
  std::int64_t max_images = 1;
  std::int64_t min_tokens = 128;
  std::int64_t max_tokens = 128;
};

// DFLOP's Model Profiler on weft's costs: per TP degree of each component, its throughput at each
// grid size (FLOPs over time, both on one rank), its activations per unit and its model state at
// one layer and at all of them (the paper's two layer counts).
ModelProfile profile_model(ModelCosts& costs, const ProfileGrid& grid);

}  // namespace weft::dflop
