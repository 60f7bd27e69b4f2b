#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "simulator/core/enum_names.hpp"
#include "simulator/core/json_cursor.hpp"
#include "simulator/workload/training_scenario.hpp"

namespace weft {

// What a published run reports: its iteration time, its tokens per second (of the whole job or per
// GPU), or its TFLOP/s per GPU counted by a stated convention.
enum class PublishedMetric : std::uint8_t { iteration_time_s, tokens_per_s, tokens_per_s_per_gpu, tflops_per_gpu };
inline constexpr EnumNames<PublishedMetric, 4> kPublishedMetricNames({"iteration_time_s", "tokens_per_s",
                                                                      "tokens_per_s_per_gpu", "tflops_per_gpu"});

// How a source counts the FLOPs of an iteration:
//   megatron        weft's model FLOPs (Megatron-LM's num_floating_point_operations: matrix
//                   multiplications, backward twice the forward, attention over the full s x s,
//                   no recomputation)
//   narayanan-eq3   Narayanan et al. 2021 (SC'21) eq. 3, hardware FLOPs with full activation
//                   recomputation: 96 B s l h^2 (1 + s / 6h + V / 16 l h)
enum class FlopsConvention : std::uint8_t { megatron, narayanan_eq3 };
inline constexpr EnumNames<FlopsConvention, 2> kFlopsConventionNames({"megatron", "narayanan-eq3"});

// A published end-to-end training measurement (scenarios/validation/, docs/VALIDATION.md): the
// run as a weft scenario, where its number comes from and what was assumed to map it.
struct PublishedCase {
  std::string id;            // the file's stem
  std::string source_group;  // cases of one publication or team share it
  std::string description;
  std::string source;
  std::string quote;  // the row or sentence the value comes from
  std::vector<std::string> assumptions;
  std::string gpu;  // as the source names it
  PublishedMetric metric = PublishedMetric::iteration_time_s;
  double value = 0.0;
  FlopsConvention flops = FlopsConvention::megatron;
  double peak_memory_gb = 0.0;  // the most memory a GPU used, where the source says (0: not said)
  bool out_of_memory = false;   // the source reports the run out of memory: no metric or value
  bool memory_only = false;     // the source gives the peak memory and no throughput weft can compare
  TrainingScenario scenario;
};

struct PublishedResult {
  std::string id;
  std::string source_group;
  std::string gpu;
  std::int64_t gpus = 0;
  PublishedMetric metric = PublishedMetric::iteration_time_s;
  double published = 0.0;
  double predicted = 0.0;  // in the published metric
  // Predicted throughput over published throughput, minus one: positive when weft predicts a
  // faster run than was measured.
  double error = 0.0;
  bool oom = false;                  // weft says the plan does not fit in memory
  bool published_oom = false;        // the source reports the run out of memory (no error to count)
  bool memory_only = false;          // the source gives the peak memory only (no error to count)
  double published_memory_gb = 0.0;  // 0: the source gives no peak memory
  double predicted_memory_gb = 0.0;  // weft's peak over every GPU
  double memory_capacity_gb = 0.0;   // the memory of the GPU that peak is on
};

struct SuiteSummary {
  int cases = 0;  // runs with a published throughput
  int memory_only_cases = 0;
  double mean_abs_error = 0.0;
  double mean_signed_error = 0.0;
  double worst_abs_error = 0.0;
  std::string worst_case;
  std::vector<std::string> source_groups;
  // Over the runs whose source gives the peak memory (memory-only runs too): weft's relative error.
  int memory_cases = 0;
  double memory_mean_abs_error = 0.0;
  double memory_worst_abs_error = 0.0;
  // Runs that ran, which weft nevertheless predicts out of memory.
  int predicted_out_of_memory = 0;
};

// Reads a case file {"description", "source_group", "source", "quote", "gpu", "assumptions",
// "published": {"metric", "value", "flops", "peak_memory_GB" or "peak_memory_GiB"}, "scenario":
// {...}}; "metric" and "value" may be left out where the peak memory is given (a run compared on
// its memory only), and "published": {"out_of_memory": true} is a run the source reports out of
// memory; errors name the JSON path.
PublishedCase read_published_case(const JsonCursor& root, std::string id);

// The FLOPs of one iteration of `scenario` by a convention, given weft's model FLOPs.
double convention_flops(const TrainingScenario& scenario, FlopsConvention convention, double model_flops);

// Simulates the case's run (folded, with reuse) and compares it with the published value.
PublishedResult run_published_case(const PublishedCase& published);

// Mean absolute, mean signed and worst error over `results`' published throughputs, the error of
// the peak memory where they give it, and the runs weft predicts out of memory.
SuiteSummary summarize(const std::vector<PublishedResult>& results);

}  // namespace weft
