#pragma once

#include <span>
#include <vector>

#include "simulator/planner/dip/layer_costs.hpp"
#include "simulator/planner/entrain/microbatch_assignment.hpp"

namespace weft::entrain {

// T(x) = a x^2 + b x + c.
struct Quadratic {
  double a = 0.0;
  double b = 0.0;
  double c = 0.0;

  double at(double x) const { return (a * x + b) * x + c; }
};

// The least-squares quadratic through (x, y) with each point weighted by 1/y^2, so that the fit
// minimises relative error over sizes that span orders of magnitude. Needs 3 points or more, and
// positive y.
Quadratic fit_quadratic(std::span<const double> x, std::span<const double> y);

// The token counts Entrain profiles each layer at (papers/002 §4.4.1).
inline constexpr double kProfiledTokens[] = {64, 256, 1024, 4096, 16384};

// Entrain's hardware-calibrated analytical cost model (§4.4.1): every pipeline layer (with the
// blocks anchored to it) profiled at the token counts above, here on weft's own per-layer costs
// (LayerCosts: the cluster's calibrated kernels), and fitted per layer as T(x) = a x^2 + b x + c,
// x the tokens its module sees of one sample (an image module's: images x tokens per image, whole
// images). A sample's work on a component is its layers' T summed; the model is what Entrain plans
// with, not what the iteration is timed with.
class SampleCostModel {
 public:
  // Layers [0, encoder_layers) are the encoder component, the rest the LLM; each layer's time is
  // its forward and backward under `policy`.
  SampleCostModel(dip::LayerCosts& costs, dip::LayerPolicy policy, int encoder_layers);

  int layers() const { return static_cast<int>(fits_.size()); }
  int encoder_layers() const { return encoder_layers_; }
  // Seconds `layer` takes for one sample; 0 when the sample gives its module no tokens.
  double layer_time(int layer, const SampleShape& sample) const;
  // A sample's work on each component.
  SampleWork work(const SampleShape& sample) const;
  // The largest relative error of any layer's fit at the profiled points.
  double worst_fit_error() const { return worst_fit_error_; }

 private:
  double tokens(int layer, const SampleShape& sample) const;

  std::vector<Quadratic> fits_;
  std::vector<std::int64_t> tokens_per_image_;  // per layer: 0 for a module of text tokens
  int encoder_layers_ = 0;
  double worst_fit_error_ = 0.0;
};

}  // namespace weft::entrain
