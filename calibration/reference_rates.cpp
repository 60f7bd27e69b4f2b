#include "calibration/reference_rates.hpp"

#include <algorithm>

#include "calibration/alpha_beta_fit.hpp"
#include "calibration/measurement_work.hpp"

namespace weft {
namespace {

bool fitted(const Measurement& m) { return m.split == MeasurementSplit::fit; }

void keep_best(std::map<Dtype, double>& best, Dtype dtype, double rate) {
  double& current = best[dtype];
  current = std::max(current, rate);
}

}  // namespace

bool is_memory_bound_measurement(const Measurement& m) { return is_memory_bound_class(m.op); }

double memory_bound_bytes(const Measurement& m) {
  return static_cast<double>(compute_measurement_work(m).memory_bytes);
}

std::map<Dtype, double> best_flops(const std::vector<Measurement>& measurements) {
  std::map<Dtype, double> gemm;
  std::map<Dtype, double> attention;
  for (const Measurement& m : measurements) {
    if (!fitted(m)) continue;
    if (m.op == OpClass::gemm) keep_best(gemm, m.dtype, nominal_flops(m.op, m.shape) / m.median_s());
    if (m.op == OpClass::attention_fwd || m.op == OpClass::attention_bwd) {
      keep_best(attention, m.dtype, nominal_flops(m.op, m.shape) / m.median_s());
    }
  }
  for (const auto& [dtype, rate] : attention) gemm.try_emplace(dtype, rate);
  return gemm;
}

std::map<Dtype, double> best_memory_bandwidth(const std::vector<Measurement>& measurements) {
  std::map<Dtype, double> best;
  for (const Measurement& m : measurements) {
    if (fitted(m) && is_memory_bound_measurement(m)) keep_best(best, m.dtype, memory_bound_bytes(m) / m.median_s());
  }
  return best;
}

std::optional<AlphaBeta> point_to_point_fit(const std::vector<Measurement>& measurements, bool across_nodes) {
  std::vector<SizeTime> points;
  for (const Measurement& m : measurements) {
    const bool crosses = m.op == OpClass::send && m.field("ranks_per_node") == 1;
    if (fitted(m) && m.op == OpClass::send && crosses == across_nodes) {
      points.push_back({static_cast<double>(m.field("bytes")), m.median_s()});
    }
  }
  if (points.size() < 2) return std::nullopt;
  return fit_alpha_beta(points);
}

}  // namespace weft
