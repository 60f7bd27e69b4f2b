#include "cost_models/calibrated_cost_model.hpp"

#include <cmath>

namespace weft {
namespace {

TimeNs to_ns(double seconds) { return static_cast<TimeNs>(std::llround(seconds * kNsPerSecond)); }

}  // namespace

double nominal_flops(OpClass op_class, std::span<const std::int64_t> shape) {
  auto product = [&](std::size_t first, std::size_t last) {
    double p = 1.0;
    for (std::size_t i = first; i < last; ++i) p *= static_cast<double>(shape[i]);
    return p;
  };
  if (op_class == OpClass::gemm && shape.size() == 3) return 2.0 * product(0, 3);
  if ((op_class == OpClass::attention_fwd || op_class == OpClass::attention_bwd) && shape.size() == 6) {
    const double forward = 4.0 * product(0, 5) * (shape[5] != 0 ? 0.5 : 1.0);
    return op_class == OpClass::attention_fwd ? forward : 2.5 * forward;
  }
  return 0.0;
}

bool is_memory_bound_class(OpClass op_class) {
  switch (op_class) {
    case OpClass::elementwise:
    case OpClass::norm:
    case OpClass::embedding:
    case OpClass::loss:
    case OpClass::optimizer:
    case OpClass::memcpy:
      return true;
    default:
      return false;
  }
}

std::array<double, 3> attention_table_point(std::span<const std::int64_t> shape) {
  return {static_cast<double>(shape[0] * shape[1]),
          std::sqrt(static_cast<double>(shape[2]) * static_cast<double>(shape[3])), static_cast<double>(shape[4])};
}

std::optional<TimeNs> CalibratedCostModel::compute_bound(const LogGridTable& table, std::span<const double> point,
                                                         double flops, Dtype dtype) const {
  const auto peak = peak_flops_.find(dtype);
  if (peak == peak_flops_.end()) return std::nullopt;
  return to_ns(flops / (table.at(point) * peak->second));
}

std::optional<TimeNs> CalibratedCostModel::compute_duration(const OpWork& work) const {
  if (work.op_class == OpClass::gemm && work.shape.size() == 3) {
    const auto table = gemm_.find(work.dtype);
    if (table == gemm_.end()) return std::nullopt;
    const std::array<double, 3> point = {static_cast<double>(work.shape[0]), static_cast<double>(work.shape[1]),
                                         static_cast<double>(work.shape[2])};
    return compute_bound(table->second, point, nominal_flops(work.op_class, work.shape), work.dtype);
  }
  if ((work.op_class == OpClass::attention_fwd || work.op_class == OpClass::attention_bwd) && work.shape.size() == 6) {
    const auto table = attention_.find({work.op_class, work.dtype, work.shape[5] != 0});
    if (table == attention_.end()) return std::nullopt;
    return compute_bound(table->second, attention_table_point(work.shape), nominal_flops(work.op_class, work.shape),
                         work.dtype);
  }
  if (is_memory_bound_class(work.op_class) && work.memory_bytes > 0) {
    const auto table = memory_bound_.find(work.dtype);
    const auto bandwidth = memory_bandwidth_.find(work.dtype);
    if (table == memory_bound_.end() || bandwidth == memory_bandwidth_.end()) return std::nullopt;
    const std::array<double, 1> point = {static_cast<double>(work.memory_bytes)};
    return to_ns(static_cast<double>(work.memory_bytes) / (table->second.at(point) * bandwidth->second));
  }
  return std::nullopt;
}

std::optional<TimeNs> CalibratedCostModel::communication_duration(OpClass op_class, Bytes bytes, int group_size) const {
  const auto fit = communication_.find({op_class, group_size});
  if (fit == communication_.end()) return std::nullopt;
  return to_ns(fit->second.seconds(bytes));
}

}  // namespace weft
