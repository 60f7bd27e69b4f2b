#include "calibration/profile_io.hpp"

#include <string>

namespace weft {
namespace {

using namespace profile_format;

nlohmann::json table_json(const LogGridTable& table, const std::vector<std::string>& names) {
  nlohmann::json axes = nlohmann::json::object();
  for (std::size_t a = 0; a < names.size(); ++a) axes[names[a]] = table.axes()[a];
  return {{"axes", axes}, {"efficiency", table.values()}};
}

nlohmann::json rates_json(const std::map<Dtype, double>& rates) {
  nlohmann::json out = nlohmann::json::object();
  for (const auto& [dtype, rate] : rates) out[std::string(kDtypeNames.name(dtype))] = rate;
  return out;
}

nlohmann::json holdout_json(const std::vector<HoldoutErrors>& groups) {
  nlohmann::json out = nlohmann::json::array();
  for (const HoldoutErrors& g : groups) {
    out.push_back({{"group", g.group},
                   {"count", g.count},
                   {"default_mean_abs_error", g.default_mean_abs},
                   {"default_max_abs_error", g.default_max_abs},
                   {"fitted_mean_abs_error", g.fitted_mean_abs},
                   {"fitted_max_abs_error", g.fitted_max_abs}});
  }
  return out;
}

std::string kernel_name(Kernel kernel) { return std::string(kKernelNames.name(kernel)); }

nlohmann::json gemm_json(Dtype dtype, const GemmEfficiency& gemm) {
  nlohmann::json entry = table_json(gemm.grid, kGemmAxes);
  entry["dtype"] = kDtypeNames.name(dtype);
  if (gemm.grid_layout != Kernel::any) entry["layout"] = kernel_name(gemm.grid_layout);
  if (!gemm.layout_factors.empty()) {
    nlohmann::json factors = nlohmann::json::object();
    for (const auto& [layout, factor] : gemm.layout_factors) factors[kernel_name(layout)] = factor;
    entry["layout_factors"] = factors;
  }
  if (!gemm.points.empty()) {
    nlohmann::json points = nlohmann::json::array();
    for (const auto& [key, efficiency] : gemm.points) {
      const auto& [layout, m, n, k] = key;
      nlohmann::json point = {{"m", m}, {"n", n}, {"k", k}, {"efficiency", efficiency}};
      if (layout != Kernel::any) point["layout"] = kernel_name(layout);
      points.push_back(point);
    }
    entry["points"] = points;
  }
  return entry;
}

}  // namespace

nlohmann::json profile_json(const Calibration& calibration, const std::string& created) {
  const CalibratedCostModel& model = *calibration.model;
  nlohmann::json gemm = nlohmann::json::array();
  for (const auto& [dtype, efficiency] : model.gemm()) gemm.push_back(gemm_json(dtype, efficiency));
  nlohmann::json attention = nlohmann::json::array();
  for (const auto& [key, table] : model.attention()) {
    const auto& [pass, dtype, causal, kernel] = key;
    nlohmann::json entry = table_json(table, kAttentionAxes);
    entry["op"] = kOpClassNames.name(pass);
    entry["dtype"] = kDtypeNames.name(dtype);
    entry["causal"] = causal;
    if (kernel != Kernel::any) entry["kernel"] = kernel_name(kernel);
    attention.push_back(entry);
  }
  nlohmann::json memory = nlohmann::json::array();
  for (const auto& [dtype, table] : model.memory_bound()) {
    nlohmann::json entry = table_json(table, kMemoryAxes);
    entry["dtype"] = kDtypeNames.name(dtype);
    memory.push_back(entry);
  }
  nlohmann::json memory_kernels = nlohmann::json::array();
  for (const auto& [key, table] : model.memory_kernels()) {
    const auto& [kernel, dtype] = key;
    nlohmann::json entry = table_json(table, memory_kernel_axes(kernel));
    entry["kernel"] = kernel_name(kernel);
    entry["dtype"] = kDtypeNames.name(dtype);
    memory_kernels.push_back(entry);
  }
  nlohmann::json communication = nlohmann::json::array();
  auto line = [](const AlphaBeta& fit) {
    return nlohmann::json{
        {"latency_us", fit.latency_s * 1e6},
        {"bandwidth_GBps", fit.seconds_per_byte > 0.0 ? 1.0 / fit.seconds_per_byte / kBytesPerGB : 0.0}};
  };
  for (const auto& [key, fit] : model.communication()) {
    nlohmann::json entry = {{"op", kOpClassNames.name(std::get<0>(key))},
                            {"group_size", std::get<1>(key)},
                            {"ranks_per_node", std::get<2>(key)}};
    if (fit.regimes.size() == 1) {
      entry.update(line(fit.regimes.front().fit));
    } else {
      nlohmann::json regimes = nlohmann::json::array();
      for (const CommunicationFit::Regime& regime : fit.regimes) {
        nlohmann::json r = line(regime.fit);
        if (&regime != &fit.regimes.back()) r["up_to_bytes"] = regime.up_to;
        regimes.push_back(r);
      }
      entry["regimes"] = regimes;
    }
    communication.push_back(entry);
  }
  nlohmann::json profile = {{"format", kFormat},
                            {"version", kVersion},
                            {"backend", calibration.measurements.backend},
                            {"device", model.device()},
                            {"created", created},
                            {"measurements", calibration.sources},
                            {"peak_flops", rates_json(model.peak_flops())},
                            {"memory_bandwidth", rates_json(model.memory_bandwidth())},
                            {"gemm", gemm},
                            {"attention", attention},
                            {"memory_bound", memory},
                            {"memory_kernels", memory_kernels},
                            {"communication", communication},
                            {"holdout", holdout_json(calibration.holdout)}};
  if (model.host_issue_ns() > 0) profile["host_issue_us"] = static_cast<double>(model.host_issue_ns()) / 1e3;
  for (const auto& [op, ns] : model.host_issue_by_op())
    profile["host_issue_us_by_op"][kOpClassNames.name(op)] = static_cast<double>(ns) / 1e3;
  if (model.kernel_gap_ns() > 0) profile["kernel_gap_us"] = static_cast<double>(model.kernel_gap_ns()) / 1e3;
  return profile;
}

}  // namespace weft
