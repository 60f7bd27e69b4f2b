#include "calibration/calibrate.hpp"

#include <algorithm>
#include <cmath>
#include <map>

#include <fmt/format.h>

#include "calibration/alpha_beta_fit.hpp"
#include "calibration/derived_cluster_spec.hpp"
#include "calibration/grid_table_fit.hpp"
#include "calibration/measurement_work.hpp"
#include "calibration/reference_rates.hpp"
#include "cost_models/cluster_cost_model.hpp"
#include "simulator/core/input_error.hpp"

namespace weft {
namespace {

MeasurementSet merge(const std::vector<MeasurementFile>& files) {
  if (files.empty()) throw InputError("expected at least one measurement file");
  MeasurementSet merged = files.front().set;
  merged.measurements.clear();
  std::map<std::tuple<OpClass, Dtype, std::vector<std::int64_t>, MeasurementSplit>, std::size_t> index;
  for (const MeasurementFile& file : files) {
    if (file.set.backend != merged.backend || file.set.device != merged.device) {
      throw InputError(
          fmt::format("{}: measured on '{}' ({} backend) but {} on '{}' ({} backend); a profile "
                      "describes one device",
                      file.name, file.set.device, file.set.backend, files.front().name, merged.device, merged.backend));
    }
    merged.ranks = std::max(merged.ranks, file.set.ranks);
    for (const Measurement& m : file.set.measurements) {
      const auto [it, inserted] = index.try_emplace({m.op, m.dtype, m.shape, m.split}, merged.measurements.size());
      if (inserted) {
        merged.measurements.push_back(m);
      } else {
        auto& samples = merged.measurements[it->second].samples_ns;
        samples.insert(samples.end(), m.samples_ns.begin(), m.samples_ns.end());
      }
    }
  }
  return merged;
}

std::string dtype_name(Dtype dtype) { return std::string(kDtypeNames.name(dtype)); }

std::shared_ptr<CalibratedCostModel> fit(const MeasurementSet& set) {
  auto model = std::make_shared<CalibratedCostModel>(set.device);
  const auto peaks = best_flops(set.measurements);
  const auto bandwidths = best_memory_bandwidth(set.measurements);
  for (const auto& [dtype, flops] : peaks) model->set_peak_flops(dtype, flops);
  for (const auto& [dtype, bandwidth] : bandwidths) model->set_memory_bandwidth(dtype, bandwidth);

  std::map<Dtype, std::vector<GridSample>> gemm;
  std::map<CalibratedCostModel::AttentionKey, std::vector<GridSample>> attention;
  std::map<Dtype, std::vector<GridSample>> memory;
  std::map<CalibratedCostModel::CommunicationKey, std::vector<SizeTime>> communication;
  for (const Measurement& m : set.measurements) {
    if (m.split != MeasurementSplit::fit) continue;
    const double t = m.median_s();
    switch (m.op) {
      case OpClass::gemm:
        gemm[m.dtype].push_back(
            {{static_cast<double>(m.shape[0]), static_cast<double>(m.shape[1]), static_cast<double>(m.shape[2])},
             nominal_flops(m.op, m.shape) / (t * peaks.at(m.dtype))});
        break;
      case OpClass::attention_fwd:
      case OpClass::attention_bwd: {
        const auto point = attention_table_point(m.shape);
        attention[{m.op, m.dtype, m.field("causal") != 0}].push_back(
            {{point.begin(), point.end()}, nominal_flops(m.op, m.shape) / (t * peaks.at(m.dtype))});
        break;
      }
      case OpClass::elementwise:
        memory[m.dtype].push_back({{memory_bound_bytes(m)}, memory_bound_bytes(m) / (t * bandwidths.at(m.dtype))});
        break;
      default:
        communication[{m.op, static_cast<int>(m.field("group_size"))}].push_back(
            {static_cast<double>(m.field("bytes")), t});
    }
  }
  for (const auto& [dtype, samples] : gemm) {
    model->set_gemm(dtype, fit_grid_table(samples, {"m", "n", "k"}, "gemm " + dtype_name(dtype)));
  }
  for (const auto& [key, samples] : attention) {
    const auto& [pass, dtype, causal] = key;
    const std::string what =
        fmt::format("{} {}{}", kOpClassNames.name(pass), dtype_name(dtype), causal ? " causal" : "");
    model->set_attention(pass, dtype, causal, fit_grid_table(samples, {"batch x heads", "sequence", "head_dim"}, what));
  }
  for (const auto& [dtype, samples] : memory) {
    model->set_memory_bound(dtype, fit_grid_table(samples, {"bytes"}, "elementwise " + dtype_name(dtype)));
  }
  for (const auto& [key, points] : communication) {
    try {
      model->set_communication(key.first, key.second, fit_alpha_beta(points));
    } catch (const InputError& error) {
      throw InputError(fmt::format("{} over {} ranks: {}", kOpClassNames.name(key.first), key.second, error.what()));
    }
  }
  return model;
}

std::string holdout_group(const Measurement& m) {
  if (category_of(m.op) == OpCategory::communication) {
    return fmt::format("{} ({} ranks)", kOpClassNames.name(m.op), m.field("group_size"));
  }
  const bool causal = (m.op == OpClass::attention_fwd || m.op == OpClass::attention_bwd) && m.field("causal") != 0;
  return fmt::format("{} {}{}", kOpClassNames.name(m.op), dtype_name(m.dtype), causal ? " causal" : "");
}

std::vector<HoldoutErrors> holdout_errors(const MeasurementSet& set, const ClusterSpec& default_cluster,
                                          const std::shared_ptr<const CalibratedCostModel>& model) {
  ClusterCostModel default_cost(default_cluster);
  ClusterSpec calibrated_cluster = default_cluster;
  calibrated_cluster.calibration = model;
  ClusterCostModel fitted_cost(calibrated_cluster);
  std::map<std::string, HoldoutErrors> groups;
  for (const Measurement& m : set.measurements) {
    if (m.split != MeasurementSplit::holdout) continue;
    const double measured = m.median_s();
    const double default_error = std::abs(predicted_seconds(m, default_cost) - measured) / measured;
    const double fitted_error = std::abs(predicted_seconds(m, fitted_cost) - measured) / measured;
    HoldoutErrors& group = groups[holdout_group(m)];
    group.group = holdout_group(m);
    ++group.count;
    group.default_mean_abs += default_error;
    group.fitted_mean_abs += fitted_error;
    group.default_max_abs = std::max(group.default_max_abs, default_error);
    group.fitted_max_abs = std::max(group.fitted_max_abs, fitted_error);
  }
  std::vector<HoldoutErrors> out;
  for (auto& [name, group] : groups) {
    group.default_mean_abs /= group.count;
    group.fitted_mean_abs /= group.count;
    out.push_back(group);
  }
  return out;
}

}  // namespace

Calibration calibrate(const std::vector<MeasurementFile>& files) {
  Calibration calibration;
  calibration.measurements = merge(files);
  for (const MeasurementFile& file : files) calibration.sources.push_back(file.name);
  calibration.model = fit(calibration.measurements);
  calibration.default_cluster = derive_cluster_spec(calibration.measurements);
  calibration.holdout = holdout_errors(calibration.measurements, calibration.default_cluster, calibration.model);
  return calibration;
}

}  // namespace weft
