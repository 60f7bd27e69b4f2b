#include "simulator/planner/entrain/sample_cost_model.hpp"

#include <algorithm>
#include <array>
#include <cmath>

#include "simulator/core/input_error.hpp"

namespace weft::entrain {

Quadratic fit_quadratic(std::span<const double> x, std::span<const double> y) {
  if (x.size() != y.size() || x.size() < 3) throw InputError("entrain: a quadratic fit needs three points or more");
  // Normal equations of the weighted least squares: M p = v over the basis (x^2, x, 1).
  std::array<std::array<double, 4>, 3> m{};  // augmented with v
  for (std::size_t i = 0; i < x.size(); ++i) {
    if (!(y[i] > 0.0)) throw InputError("entrain: a quadratic fit needs positive times");
    const std::array<double, 3> basis{x[i] * x[i], x[i], 1.0};
    const double weight = 1.0 / (y[i] * y[i]);
    for (std::size_t r = 0; r < 3; ++r) {
      for (std::size_t c = 0; c < 3; ++c) m[r][c] += weight * basis[r] * basis[c];
      m[r][3] += weight * basis[r] * y[i];
    }
  }
  // Gaussian elimination with partial pivoting.
  for (std::size_t col = 0; col < 3; ++col) {
    std::size_t pivot = col;
    for (std::size_t r = col + 1; r < 3; ++r) {
      if (std::abs(m[r][col]) > std::abs(m[pivot][col])) pivot = r;
    }
    std::swap(m[col], m[pivot]);
    if (m[col][col] == 0.0) throw InputError("entrain: a quadratic fit needs three distinct sizes");
    for (std::size_t r = 0; r < 3; ++r) {
      if (r == col) continue;
      const double factor = m[r][col] / m[col][col];
      for (std::size_t c = col; c < 4; ++c) m[r][c] -= factor * m[col][c];
    }
  }
  return {m[0][3] / m[0][0], m[1][3] / m[1][1], m[2][3] / m[2][2]};
}

SampleCostModel::SampleCostModel(dip::LayerCosts& costs, dip::LayerPolicy policy, int encoder_layers)
    : encoder_layers_(encoder_layers) {
  const MultimodalSpec& spec = costs.model().spec();
  for (int layer = 0; layer < costs.model().layer_count(); ++layer) {
    const ModuleSpec& module = spec.modules[costs.module_of(layer)];
    if (module.tokens != TokenSource::text && module.tokens != TokenSource::images)
      throw InputError("entrain: module '" + module.name + "' reads " +
                       (module.tokens == TokenSource::video ? "video" : "audio") +
                       "; Entrain's cost model covers image and text modules");
    const std::int64_t per_image = module.tokens == TokenSource::images ? module.tokens_per_image : 0;
    tokens_per_image_.push_back(per_image);
    std::vector<double> x;
    std::vector<double> y;
    for (const double profiled : kProfiledTokens) {
      SampleShape shape;
      if (per_image > 0) {
        shape.images = std::max<std::int64_t>(1, std::llround(profiled / static_cast<double>(per_image)));
        shape.seq_len = shape.images * per_image;
      } else {
        shape.seq_len = static_cast<std::int64_t>(profiled);
      }
      const double seconds = static_cast<double>(costs.in_stage(layer, shape).latency(policy)) / kNsPerSecond;
      if (!x.empty() && static_cast<double>(shape.seq_len) == x.back()) continue;  // images round alike
      x.push_back(static_cast<double>(shape.seq_len));
      y.push_back(seconds);
    }
    if (x.size() < 3) throw InputError("entrain: module '" + module.name + "' has too few distinct profiled sizes");
    const Quadratic fit = fit_quadratic(x, y);
    for (std::size_t i = 0; i < x.size(); ++i)
      worst_fit_error_ = std::max(worst_fit_error_, std::abs(fit.at(x[i]) - y[i]) / y[i]);
    fits_.push_back(fit);
  }
  if (encoder_layers_ < 1 || encoder_layers_ >= layers())
    throw InputError("entrain: the model needs an encoder and a language model with layers of their own");
}

double SampleCostModel::tokens(int layer, const SampleShape& sample) const {
  const std::int64_t per_image = tokens_per_image_[static_cast<std::size_t>(layer)];
  return static_cast<double>(per_image > 0 ? sample.images * per_image : sample.seq_len);
}

double SampleCostModel::layer_time(int layer, const SampleShape& sample) const {
  const double x = tokens(layer, sample);
  return x > 0.0 ? std::max(0.0, fits_[static_cast<std::size_t>(layer)].at(x)) : 0.0;
}

SampleWork SampleCostModel::work(const SampleShape& sample) const {
  SampleWork out;
  for (int layer = 0; layer < layers(); ++layer)
    (layer < encoder_layers_ ? out.encoder : out.llm) += layer_time(layer, sample);
  return out;
}

}  // namespace weft::entrain
