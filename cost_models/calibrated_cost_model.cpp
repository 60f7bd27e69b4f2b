#include "cost_models/calibrated_cost_model.hpp"

#include <cmath>
#include <vector>

namespace weft {
namespace {

TimeNs to_ns(double seconds) { return static_cast<TimeNs>(std::llround(seconds * kNsPerSecond)); }

std::vector<double> as_point(std::span<const std::int64_t> shape) { return {shape.begin(), shape.end()}; }

}  // namespace

double nominal_flops(OpClass op_class, std::span<const std::int64_t> shape) {
  auto product = [&](std::size_t first, std::size_t last) {
    double p = 1.0;
    for (std::size_t i = first; i < last; ++i) p *= static_cast<double>(shape[i]);
    return p;
  };
  if (op_class == OpClass::gemm && shape.size() == 3) return 2.0 * product(0, 3);
  if ((op_class == OpClass::attention_fwd || op_class == OpClass::attention_bwd) && shape.size() >= 6) {
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

double GemmEfficiency::at(Kernel layout, std::span<const std::int64_t> mnk) const {
  const auto point = points.find({layout, mnk[0], mnk[1], mnk[2]});
  if (point != points.end()) return point->second;
  const auto factor = layout_factors.find(layout);
  return grid.at(as_point(mnk)) * (factor != layout_factors.end() ? factor->second : 1.0);
}

std::optional<TimeNs> CalibratedCostModel::compute_bound(double efficiency, double flops, Dtype dtype) const {
  const auto peak = peak_flops_.find(dtype);
  if (peak == peak_flops_.end()) return std::nullopt;
  return to_ns(flops / (efficiency * peak->second));
}

Dtype CalibratedCostModel::measured_dtype(Dtype dtype) const {
  if (peak_flops_.contains(dtype) || memory_bandwidth_.contains(dtype)) return dtype;
  if (dtype == Dtype::fp16) return Dtype::bf16;
  if (dtype == Dtype::bf16) return Dtype::fp16;
  return dtype;
}

std::optional<TimeNs> CalibratedCostModel::memory_duration(const OpWork& work, Dtype dtype) const {
  const auto bandwidth = memory_bandwidth_.find(dtype);
  if (bandwidth == memory_bandwidth_.end()) return std::nullopt;
  const double bytes = static_cast<double>(work.memory_bytes);
  const auto kernel = memory_kernels_.find({work.kernel, dtype});
  if (kernel != memory_kernels_.end() && kernel->second.axes().size() == work.shape.size()) {
    return to_ns(bytes / (kernel->second.at(as_point(work.dims())) * bandwidth->second));
  }
  const auto table = memory_bound_.find(dtype);
  if (table == memory_bound_.end()) return std::nullopt;
  const std::array<double, 1> point = {bytes};
  return to_ns(bytes / (table->second.at(point) * bandwidth->second));
}

std::optional<TimeNs> CalibratedCostModel::compute_duration(const OpWork& work) const {
  const Dtype dtype = measured_dtype(work.dtype);
  if (work.op_class == OpClass::gemm && work.shape.size() == 3) {
    const auto model = gemm_.find(dtype);
    if (model == gemm_.end()) return std::nullopt;
    return compute_bound(model->second.at(work.kernel, work.dims()), nominal_flops(work.op_class, work.dims()), dtype);
  }
  if ((work.op_class == OpClass::attention_fwd || work.op_class == OpClass::attention_bwd) && work.shape.size() >= 6) {
    const bool causal = work.shape[5] != 0;
    auto table = attention_.find({work.op_class, dtype, causal, work.kernel});
    if (table == attention_.end()) table = attention_.find({work.op_class, dtype, causal, Kernel::any});
    if (table == attention_.end()) return std::nullopt;
    return compute_bound(table->second.at(attention_table_point(work.dims())),
                         nominal_flops(work.op_class, work.dims()), dtype);
  }
  if (is_memory_bound_class(work.op_class) && work.memory_bytes > 0) return memory_duration(work, dtype);
  return std::nullopt;
}

double CommunicationFit::seconds(Bytes bytes) const {
  for (const Regime& regime : regimes) {
    if (bytes <= regime.up_to) return regime.fit.seconds(bytes);
  }
  return regimes.empty() ? 0.0 : regimes.back().fit.seconds(bytes);
}

std::optional<TimeNs> CalibratedCostModel::communication_duration(OpClass op_class, Bytes bytes, int group_size,
                                                                  int ranks_per_node) const {
  const auto fit = communication_.find({op_class, group_size, ranks_per_node});
  if (fit == communication_.end()) return std::nullopt;
  return to_ns(fit->second.seconds(bytes));
}

bool CalibratedCostModel::measured_placement(int group_size, int ranks_per_node) const {
  return std::any_of(communication_.begin(), communication_.end(), [&](const auto& entry) {
    return std::get<1>(entry.first) == group_size && std::get<2>(entry.first) == ranks_per_node;
  });
}

}  // namespace weft
