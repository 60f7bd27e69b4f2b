#include "calibration/published_suite.hpp"

#include <algorithm>
#include <cmath>
#include <set>

#include "simulator/core/units.hpp"
#include "simulator/engine/simulation.hpp"
#include "simulator/workload/training_report.hpp"
#include "simulator/workload/training_workload.hpp"

namespace weft {

PublishedCase read_published_case(const JsonCursor& root, std::string id) {
  root.expect_only({"description", "source_group", "source", "quote", "gpu", "assumptions", "published", "scenario"});
  PublishedCase published;
  published.id = std::move(id);
  published.source_group = root.at("source_group").as_string();
  published.description = root.at("description").as_string();
  published.source = root.at("source").as_string();
  published.quote = root.at("quote").as_string();
  for (const JsonCursor& assumption : root.at("assumptions").elements()) {
    published.assumptions.push_back(assumption.as_string());
  }
  published.gpu = root.at("gpu").as_string();
  const JsonCursor measured = root.at("published");
  measured.expect_only({"metric", "value", "flops", "peak_memory_GB", "peak_memory_GiB", "out_of_memory"});
  if (auto oom = measured.find("out_of_memory")) {
    if (!oom->as_bool()) oom->fail("expected true (a run the source reports out of memory); leave it out otherwise");
    for (const char* field : {"metric", "value", "flops", "peak_memory_GB", "peak_memory_GiB"}) {
      if (auto given = measured.find(field)) given->fail("a run out of memory has none");
    }
    published.out_of_memory = true;
    published.scenario = load_training_scenario(root.at("scenario"));
    return published;
  }
  const auto gb = measured.find("peak_memory_GB");
  const auto gib = measured.find("peak_memory_GiB");
  if (gb && gib) gib->fail("give the peak memory once, in GB or in GiB");
  if (gb) published.peak_memory_gb = gb->as_positive_number();
  if (gib) published.peak_memory_gb = gib->as_positive_number() * static_cast<double>(kBytesPerGiB) / 1e9;
  if (!measured.find("metric") && published.peak_memory_gb > 0.0) {
    for (const char* field : {"value", "flops"}) {
      if (auto given = measured.find(field)) given->fail("needs published.metric (what the value measures)");
    }
    published.memory_only = true;
    published.scenario = load_training_scenario(root.at("scenario"));
    return published;
  }
  published.metric = measured.at("metric").as_enum(kPublishedMetricNames);
  published.value = measured.at("value").as_positive_number();
  if (auto flops = measured.find("flops")) {
    if (published.metric != PublishedMetric::tflops_per_gpu) flops->fail("only tflops_per_gpu counts FLOPs");
    published.flops = flops->as_enum(kFlopsConventionNames);
  } else if (published.metric == PublishedMetric::tflops_per_gpu) {
    measured.fail("missing required field 'flops' (how the source counts FLOPs: " + kFlopsConventionNames.choices() +
                  ")");
  }
  published.scenario = load_training_scenario(root.at("scenario"));
  if (published.flops == FlopsConvention::narayanan_eq3 && published.scenario.model.multimodal()) {
    measured.at("flops").fail("narayanan-eq3 counts the FLOPs of one GPT; the scenario's model has several modules");
  }
  return published;
}

double convention_flops(const TrainingScenario& scenario, FlopsConvention convention, double model_flops) {
  if (convention == FlopsConvention::megatron) return model_flops;
  const ModelSpec& model = scenario.model.single();
  const double b = static_cast<double>(scenario.training.global_batch);
  const double s = static_cast<double>(scenario.training.seq_len);
  const double l = static_cast<double>(model.layers);
  const double h = static_cast<double>(model.hidden);
  const double v = static_cast<double>(model.vocab);
  return 96.0 * b * s * l * h * h * (1.0 + s / (6.0 * h) + v / (16.0 * l * h));
}

PublishedResult run_published_case(const PublishedCase& published) {
  const TrainingScenario& scenario = published.scenario;
  const TrainingWorkload workload = build_training_workload(scenario);
  const SimulationResult simulated = simulate(workload.graph, *workload.cost_model, {});
  const TrainingReport report = make_training_report(scenario, workload, simulated);

  PublishedResult result;
  result.id = published.id;
  result.source_group = published.source_group;
  result.gpu = published.gpu;
  result.gpus = report.gpus;
  result.metric = published.metric;
  result.published = published.value;
  result.oom = report.oom;
  result.published_memory_gb = published.peak_memory_gb;
  for (const StageReport& stage : report.stages) {
    const double peak_gb = static_cast<double>(stage.peak_memory) / 1e9;
    if (peak_gb < result.predicted_memory_gb) continue;
    result.predicted_memory_gb = peak_gb;
    result.memory_capacity_gb = static_cast<double>(stage.memory_capacity) / 1e9;
  }
  result.published_oom = published.out_of_memory;
  result.memory_only = published.memory_only;
  if (published.out_of_memory || published.memory_only) return result;
  const double t = report.iteration_time_s;
  const double tokens = static_cast<double>(scenario.training.global_batch * scenario.training.seq_len);
  switch (published.metric) {
    case PublishedMetric::iteration_time_s:
      result.predicted = t;
      result.error = published.value / t - 1.0;
      return result;
    case PublishedMetric::tokens_per_s:
      result.predicted = tokens / t;
      break;
    case PublishedMetric::tokens_per_s_per_gpu:
      result.predicted = tokens / t / static_cast<double>(report.gpus);
      break;
    case PublishedMetric::tflops_per_gpu:
      result.predicted = convention_flops(scenario, published.flops, report.model_flops_per_iteration) / t /
                         static_cast<double>(report.gpus) / 1e12;
      break;
  }
  result.error = result.predicted / published.value - 1.0;
  return result;
}

SuiteSummary summarize(const std::vector<PublishedResult>& results) {
  SuiteSummary summary;
  std::set<std::string> groups;
  for (const PublishedResult& r : results) {
    if (r.oom) ++summary.predicted_out_of_memory;
    if (r.published_memory_gb > 0.0) {
      const double error = std::abs(r.predicted_memory_gb / r.published_memory_gb - 1.0);
      ++summary.memory_cases;
      summary.memory_mean_abs_error += error;
      summary.memory_worst_abs_error = std::max(summary.memory_worst_abs_error, error);
    }
    if (r.memory_only) {
      ++summary.memory_only_cases;
      continue;
    }
    ++summary.cases;
    summary.mean_abs_error += std::abs(r.error);
    summary.mean_signed_error += r.error;
    if (std::abs(r.error) >= summary.worst_abs_error) {
      summary.worst_abs_error = std::abs(r.error);
      summary.worst_case = r.id;
    }
    groups.insert(r.source_group);
  }
  if (summary.memory_cases > 0) summary.memory_mean_abs_error /= summary.memory_cases;
  if (summary.cases > 0) {
    summary.mean_abs_error /= summary.cases;
    summary.mean_signed_error /= summary.cases;
  }
  summary.source_groups.assign(groups.begin(), groups.end());
  return summary;
}

}  // namespace weft
