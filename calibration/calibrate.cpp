#include "calibration/calibrate.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>

#include <fmt/format.h>

#include "calibration/alpha_beta_fit.hpp"
#include "calibration/derived_cluster_spec.hpp"
#include "calibration/grid_table_fit.hpp"
#include "calibration/measurement_work.hpp"
#include "calibration/reference_rates.hpp"
#include "cost_models/cluster_cost_model.hpp"
#include "cost_models/comm_group.hpp"
#include "cost_models/profile_format.hpp"
#include "simulator/core/input_error.hpp"

namespace weft {
namespace {

MeasurementSet merge(const std::vector<MeasurementFile>& files) {
  if (files.empty()) throw InputError("expected at least one measurement file");
  MeasurementSet merged = files.front().set;
  merged.measurements.clear();
  std::map<std::tuple<OpClass, Dtype, Kernel, std::vector<std::int64_t>, MeasurementSplit, bool>, std::size_t> index;
  for (const MeasurementFile& file : files) {
    if (file.set.backend != merged.backend || file.set.device != merged.device) {
      throw InputError(
          fmt::format("{}: measured on '{}' ({} backend) but {} on '{}' ({} backend); a profile "
                      "describes one device",
                      file.name, file.set.device, file.set.backend, files.front().name, merged.device, merged.backend));
    }
    merged.ranks = std::max(merged.ranks, file.set.ranks);
    for (const HostIssueMeasurement& host : file.set.host_issue) {
      if (&file == &files.front()) continue;
      auto same = std::find_if(merged.host_issue.begin(), merged.host_issue.end(),
                               [&](const HostIssueMeasurement& h) { return h.op == host.op; });
      if (same == merged.host_issue.end()) same = merged.host_issue.insert(merged.host_issue.end(), {host.op, {}});
      same->samples_ns.insert(same->samples_ns.end(), host.samples_ns.begin(), host.samples_ns.end());
    }
    if (file.set.kernel_gap && &file != &files.front()) {
      if (!merged.kernel_gap) merged.kernel_gap.emplace();
      auto& samples = merged.kernel_gap->samples_ns;
      samples.insert(samples.end(), file.set.kernel_gap->samples_ns.begin(), file.set.kernel_gap->samples_ns.end());
    }
    for (const Measurement& m : file.set.measurements) {
      const auto [it, inserted] =
          index.try_emplace({m.op, m.dtype, m.kernel, m.shape, m.split, m.grid}, merged.measurements.size());
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

std::vector<double> shape_point(const Measurement& m) { return {m.shape.begin(), m.shape.end()}; }

std::string kernel_suffix(Kernel kernel) {
  return kernel == Kernel::any ? "" : " " + std::string(kKernelNames.name(kernel));
}

// The GEMM efficiency of one dtype: the table through the grid measurements, the layout factors
// and points of the measurements off the grid (`skip`, when given, is left out: leave-one-out).
GemmEfficiency fit_gemm(const std::vector<const Measurement*>& measurements, double peak, const std::string& what,
                        const Measurement* skip = nullptr) {
  auto efficiency_of = [&](const Measurement& m) { return nominal_flops(m.op, m.shape) / (m.median_s() * peak); };
  GemmEfficiency model;
  std::vector<GridSample> grid;
  std::optional<Kernel> grid_layout;
  for (const Measurement* m : measurements) {
    if (!m->grid) continue;
    if (grid_layout && *grid_layout != m->kernel) {
      throw InputError(fmt::format("{}: the grid mixes layouts {} and {} (mark one layout's shapes \"grid\": false)",
                                   what, kKernelNames.name(*grid_layout), kKernelNames.name(m->kernel)));
    }
    grid_layout = m->kernel;
    grid.push_back({shape_point(*m), efficiency_of(*m)});
  }
  if (grid.empty()) throw InputError(what + ": every GEMM measurement is off the grid (\"grid\": false)");
  model.grid = fit_grid_table(grid, {"m", "n", "k"}, what);
  model.grid_layout = *grid_layout;
  // A shape measured off the grid is a point: the mean efficiency of every measurement of its
  // layout and shape, on the grid or off it.
  using PointKey = std::tuple<Kernel, std::int64_t, std::int64_t, std::int64_t>;
  std::map<PointKey, std::pair<double, int>> point_sums;
  for (const Measurement* m : measurements) {
    if (!m->grid && m != skip) point_sums[{m->kernel, m->shape[0], m->shape[1], m->shape[2]}] = {0.0, 0};
  }
  std::map<Kernel, std::pair<double, int>> log_ratios;
  for (const Measurement* m : measurements) {
    if (m == skip) continue;
    const double efficiency = efficiency_of(*m);
    const auto point = point_sums.find({m->kernel, m->shape[0], m->shape[1], m->shape[2]});
    if (point != point_sums.end()) {
      point->second.first += efficiency;
      ++point->second.second;
    }
    if (m->grid || m->kernel == model.grid_layout) continue;  // the table is this layout's own measurement
    auto& [sum, count] = log_ratios[m->kernel];
    sum += std::log(efficiency / model.grid.at(shape_point(*m)));
    ++count;
  }
  for (const auto& [key, sum] : point_sums) model.points[key] = sum.first / sum.second;
  for (const auto& [layout, ratio] : log_ratios) model.layout_factors[layout] = std::exp(ratio.first / ratio.second);
  return model;
}

std::map<Dtype, std::vector<const Measurement*>> fitted_gemms(const MeasurementSet& set) {
  std::map<Dtype, std::vector<const Measurement*>> gemms;
  for (const Measurement& m : set.measurements) {
    if (m.split == MeasurementSplit::fit && m.op == OpClass::gemm) gemms[m.dtype].push_back(&m);
  }
  return gemms;
}

std::shared_ptr<CalibratedCostModel> fit(const MeasurementSet& set) {
  auto model = std::make_shared<CalibratedCostModel>(set.device);
  const auto peaks = best_flops(set.measurements);
  const auto bandwidths = best_memory_bandwidth(set.measurements);
  for (const auto& [dtype, flops] : peaks) model->set_peak_flops(dtype, flops);
  for (const auto& [dtype, bandwidth] : bandwidths) model->set_memory_bandwidth(dtype, bandwidth);
  for (const HostIssueMeasurement& host : set.host_issue) {
    model->set_host_issue_ns(host.op, static_cast<TimeNs>(std::llround(host.median_ns())));
  }
  if (set.kernel_gap) model->set_kernel_gap_ns(static_cast<TimeNs>(std::llround(set.kernel_gap->median_ns())));

  std::map<CalibratedCostModel::AttentionKey, std::vector<GridSample>> attention;
  std::map<Dtype, std::vector<GridSample>> memory;
  std::map<CalibratedCostModel::KernelKey, std::vector<GridSample>> memory_kernels;
  std::map<CalibratedCostModel::CommunicationKey, std::vector<SizeTime>> communication;
  for (const Measurement& m : set.measurements) {
    if (m.split != MeasurementSplit::fit || m.op == OpClass::gemm) continue;
    const double t = m.median_s();
    if (m.op == OpClass::attention_fwd || m.op == OpClass::attention_bwd) {
      const auto point = attention_table_point(m.shape);
      attention[{m.op, m.dtype, m.field("causal") != 0, m.kernel}].push_back(
          {{point.begin(), point.end()}, nominal_flops(m.op, m.shape) / (t * peaks.at(m.dtype))});
    } else if (is_memory_bound_measurement(m)) {
      const OpWork work = compute_measurement_work(m);
      const double bytes = static_cast<double>(work.memory_bytes);
      const double efficiency = bytes / (t * bandwidths.at(m.dtype));
      if (m.kernel == Kernel::any) {
        memory[m.dtype].push_back({{bytes}, efficiency});
      } else {
        memory_kernels[{m.kernel, m.dtype}].push_back({{work.shape.begin(), work.shape.end()}, efficiency});
      }
    } else {
      communication[{m.op, static_cast<int>(m.field("group_size")), static_cast<int>(m.field("ranks_per_node"))}]
          .push_back({static_cast<double>(m.field("bytes")), t});
    }
  }
  for (const auto& [dtype, gemms] : fitted_gemms(set)) {
    model->set_gemm(dtype, fit_gemm(gemms, peaks.at(dtype), "gemm " + dtype_name(dtype)));
  }
  for (const auto& [key, samples] : attention) {
    const auto& [pass, dtype, causal, kernel] = key;
    const std::string what = fmt::format("{} {}{}{}", kOpClassNames.name(pass), dtype_name(dtype),
                                         causal ? " causal" : "", kernel_suffix(kernel));
    // Published figures hold batch x heads x sequence fixed (the FlashAttention README's setup): the
    // grid points between them take the nearest measured shapes' efficiency.
    model->set_attention(pass, dtype, causal,
                         fit_grid_table(samples, {"batch x heads", "sequence", "head_dim"}, what, GridGaps::nearest),
                         kernel);
  }
  for (const auto& [dtype, samples] : memory) {
    model->set_memory_bound(dtype, fit_grid_table(samples, {"bytes"}, "elementwise " + dtype_name(dtype)));
  }
  for (const auto& [key, samples] : memory_kernels) {
    const auto& [kernel, dtype] = key;
    // A kernel's shapes whose measurement was left out (tools/reference-measurements.py) take the
    // efficiency of the nearest measured shapes.
    model->set_memory_kernel(
        kernel, dtype,
        fit_grid_table(samples, profile_format::memory_kernel_axes(kernel),
                       std::string(kKernelNames.name(kernel)) + " " + dtype_name(dtype), GridGaps::nearest));
  }
  for (const auto& [key, points] : communication) {
    const auto& [op, group_size, ranks_per_node] = key;
    try {
      model->set_communication(op, group_size, ranks_per_node, fit_regimes(points));
    } catch (const InputError& error) {
      throw InputError(fmt::format("{} over {}: {}", kOpClassNames.name(op), placement_text(group_size, ranks_per_node),
                                   error.what()));
    }
  }
  return model;
}

std::string holdout_group(const Measurement& m) {
  if (category_of(m.op) == OpCategory::communication) {
    return fmt::format(
        "{} ({})", kOpClassNames.name(m.op),
        placement_text(static_cast<int>(m.field("group_size")), static_cast<int>(m.field("ranks_per_node"))));
  }
  const bool causal = (m.op == OpClass::attention_fwd || m.op == OpClass::attention_bwd) && m.field("causal") != 0;
  return fmt::format("{} {}{}{}", kOpClassNames.name(m.op), dtype_name(m.dtype), causal ? " causal" : "",
                     kernel_suffix(m.kernel));
}

void add_error(std::map<std::string, HoldoutErrors>& groups, const std::string& name, double default_error,
               double fitted_error) {
  HoldoutErrors& group = groups[name];
  group.group = name;
  ++group.count;
  group.default_mean_abs += default_error;
  group.fitted_mean_abs += fitted_error;
  group.default_max_abs = std::max(group.default_max_abs, default_error);
  group.fitted_max_abs = std::max(group.fitted_max_abs, fitted_error);
}

// Each GEMM measured off the grid, predicted by the fit of every other measurement.
void add_gemm_leave_one_out(std::map<std::string, HoldoutErrors>& groups, const MeasurementSet& set,
                            ClusterCostModel& default_cost, const CalibratedCostModel& model) {
  for (const auto& [dtype, gemms] : fitted_gemms(set)) {
    const double peak = model.peak_flops().at(dtype);
    for (const Measurement* m : gemms) {
      if (m->grid) continue;
      const GemmEfficiency without = fit_gemm(gemms, peak, "gemm " + dtype_name(dtype), m);
      const double predicted = nominal_flops(m->op, m->shape) / (without.at(m->kernel, m->shape) * peak);
      const double measured = m->median_s();
      add_error(groups, holdout_group(*m) + " (leave one out)",
                std::abs(predicted_seconds(*m, default_cost) - measured) / measured,
                std::abs(predicted - measured) / measured);
    }
  }
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
    add_error(groups, holdout_group(m), std::abs(predicted_seconds(m, default_cost) - measured) / measured,
              std::abs(predicted_seconds(m, fitted_cost) - measured) / measured);
  }
  add_gemm_leave_one_out(groups, set, default_cost, *model);
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
