#include "simulator/planner/dflop/adaptive_correction.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "simulator/core/hash_mix.hpp"

namespace weft::dflop {
namespace {

std::pair<std::int64_t, std::int64_t> shape_key(const SampleShape& sample, std::int64_t pad_to) {
  return {sample.images, (sample.seq_len + pad_to - 1) / pad_to * pad_to};
}

}  // namespace

bool Anomalies::affects(const SampleShape& sample, std::int64_t pad_to) const {
  if (rate <= 0.0) return false;
  const auto [images, tokens] = shape_key(sample, pad_to);
  const std::uint64_t hash =
      hash_mix(hash_mix(seed, static_cast<std::uint64_t>(images)), static_cast<std::uint64_t>(tokens));
  return static_cast<double>(hash) / static_cast<double>(std::numeric_limits<std::uint64_t>::max()) < rate;
}

std::vector<double> Anomalies::delays(std::span<const SampleShape> samples, const DflopPlan& plan,
                                      std::int64_t pad_to) const {
  const double delay = latency * std::max(plan.encoder_stage_s, plan.llm_stage_s);
  std::vector<double> out;
  for (const SampleShape& sample : samples) out.push_back(affects(sample, pad_to) ? delay : 0.0);
  return out;
}

ItemDurations AdaptiveCorrection::corrected(std::span<const SampleShape> samples, const ItemDurations& estimate,
                                            std::int64_t pad_to) const {
  ItemDurations out = estimate;
  for (std::size_t i = 0; i < samples.size(); ++i) {
    const auto found = penalties_.find(shape_key(samples[i], pad_to));
    if (found == penalties_.end()) continue;
    out.encoder[i] += found->second.first;
    out.llm[i] += found->second.second;
  }
  return out;
}

std::size_t AdaptiveCorrection::penalised(std::span<const SampleShape> samples, std::int64_t pad_to) const {
  return static_cast<std::size_t>(std::count_if(samples.begin(), samples.end(), [&](const SampleShape& sample) {
    return penalties_.contains(shape_key(sample, pad_to));
  }));
}

bool AdaptiveCorrection::observe(std::span<const SampleShape> samples, const ItemDurations& estimate,
                                 const ItemDurations& observed, std::int64_t pad_to, std::optional<double> benefit) {
  if (!tracking_) return false;
  auto off = [&](double seen, double expected) {
    return std::abs(seen - expected) > options_.deviation * std::max(expected, 1e-12);
  };
  for (std::size_t i = 0; i < samples.size(); ++i) {
    if (!off(observed.encoder[i], estimate.encoder[i]) && !off(observed.llm[i], estimate.llm[i])) continue;
    penalties_[shape_key(samples[i], pad_to)] = {observed.encoder[i] - estimate.encoder[i],
                                                 observed.llm[i] - estimate.llm[i]};
  }
  if (benefit) benefits_.push_back(*benefit);
  if (static_cast<int>(benefits_.size()) >= options_.window) {
    const double mean = std::accumulate(benefits_.end() - options_.window, benefits_.end(), 0.0) / options_.window;
    tracking_ = mean > options_.cost;
  }
  return tracking_;
}

}  // namespace weft::dflop
