#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <string>

#include "calibration/published_suite.hpp"
#include "tests/simulator/workload/training_test_support.hpp"

namespace weft {
namespace {

using test::kSmallLlama;

const std::string kScenario = R"({"model": )" + kSmallLlama +
                              R"(, "cluster": {"base": "dgx-h100", "gpus": 8}, "parallel": {"tp": 2, "dp": 4},
                                 "training": {"global_batch": 16, "seq_len": 1024}})";

std::string case_with(const std::string& published) {
  return R"({"description": "d", "source_group": "g", "source": "s", "quote": "q", "gpu": "H100",
            "assumptions": ["a"], "published": )" +
         published + R"(, "scenario": )" + kScenario + "}";
}

std::string number(double value) { return nlohmann::json(value).dump(); }

PublishedCase read_case(const std::string& text) {
  const JsonDocument document = JsonDocument::parse_text(text, "case.json");
  return read_published_case(document.root(), "case");
}

TEST_CASE("Narayanan et al.'s eq. 3 counts an iteration's hardware FLOPs with full recomputation",
          "[calibration][suite]") {
  // GPT of 3 layers, hidden 8, vocabulary 16; a batch of 2 sequences of 4 tokens.
  const std::string gpt = R"({"model": {"name": "tiny", "kind": "decoder", "layers": 3, "hidden": 8, "ffn_hidden": 32,
                                        "heads": 2, "vocab": 16, "activation": "gelu", "norm": "layernorm",
                                        "position": "learned", "max_positions": 4},
                              "cluster": {"base": "dgx-h100", "gpus": 1}, "parallel": {},
                              "training": {"global_batch": 2, "seq_len": 4}})";
  const TrainingScenario scenario = test::scenario_from(gpt);
  // 96 B s l h^2 (1 + s / 6h + V / 16 l h) = 96 * 2 * 4 * 3 * 64 * (1 + 4/48 + 16/384).
  const double expected = 96.0 * 2 * 4 * 3 * 64 * (1.0 + 4.0 / 48.0 + 16.0 / 384.0);
  CHECK(convention_flops(scenario, FlopsConvention::narayanan_eq3, 123.0) == Approx(expected));
  CHECK(convention_flops(scenario, FlopsConvention::megatron, 123.0) == 123.0);
}

TEST_CASE("a published run's error is weft's throughput over the published one, minus 1", "[calibration][suite]") {
  // As the case loads it: the cluster's own (bundled) profile.
  const JsonDocument scenario = JsonDocument::parse_text(kScenario, "scenario.json");
  const auto run = test::run_training(load_training_scenario(scenario.root()));
  const double time = run.report.iteration_time_s;
  const double tokens = 16.0 * 1024;

  const PublishedResult slower = run_published_case(
      read_case(case_with(R"({"metric": "iteration_time_s", "value": )" + number(time * 1.25) + "}")));
  CHECK(slower.predicted == Approx(time));
  CHECK(slower.error == Approx(0.25));  // measured 25% slower: weft is 25% optimistic
  CHECK(slower.gpus == 8);

  const PublishedResult tokens_case = run_published_case(
      read_case(case_with(R"({"metric": "tokens_per_s", "value": )" + number(tokens / time / 2) + "}")));
  CHECK(tokens_case.predicted == Approx(tokens / time));
  CHECK(tokens_case.error == Approx(1.0).epsilon(1e-6));

  const PublishedResult per_gpu = run_published_case(
      read_case(case_with(R"({"metric": "tokens_per_s_per_gpu", "value": )" + number(tokens / time / 8 * 1.6) + "}")));
  CHECK(per_gpu.error == Approx(1.0 / 1.6 - 1.0).epsilon(1e-6));

  const double tflops = run.report.model_flops_per_iteration / time / 8 / 1e12;
  const PublishedResult flops = run_published_case(read_case(
      case_with(R"({"metric": "tflops_per_gpu", "value": )" + number(tflops * 0.8) + R"(, "flops": "megatron"})")));
  CHECK(flops.predicted == Approx(tflops));
  CHECK(flops.error == Approx(0.25).epsilon(1e-6));

  const SuiteSummary summary = summarize({slower, per_gpu});
  CHECK(summary.cases == 2);
  CHECK(summary.mean_abs_error == Approx((0.25 + 0.375) / 2).epsilon(1e-6));
  CHECK(summary.mean_signed_error == Approx((0.25 - 0.375) / 2).epsilon(1e-6));
  CHECK(summary.worst_abs_error == Approx(0.375).epsilon(1e-6));
  CHECK(summary.source_groups == std::vector<std::string>{"g"});
}

TEST_CASE("a run its source reports out of memory has no value, and is checked for weft's verdict",
          "[calibration][suite]") {
  const PublishedCase oom = read_case(case_with(R"({"out_of_memory": true})"));
  CHECK(oom.out_of_memory);
  const PublishedResult result = run_published_case(oom);
  CHECK(result.published_oom);
  CHECK_FALSE(result.oom);  // the small Llama fits on an H100
  CHECK(result.error == 0.0);
}

TEST_CASE("a run given by its peak memory alone is compared on it and counts in no throughput error",
          "[calibration][suite][memory]") {
  const JsonDocument scenario = JsonDocument::parse_text(kScenario, "scenario.json");
  const auto run = test::run_training(load_training_scenario(scenario.root()));
  const double peak_gb = static_cast<double>(run.report.stages.front().peak_memory) / 1e9;
  // 10 GiB is 10.737418240 GB.
  const PublishedCase memory = read_case(case_with(R"({"peak_memory_GiB": 10})"));
  CHECK(memory.memory_only);
  CHECK(memory.peak_memory_gb == Approx(10.73741824).epsilon(1e-12));
  const PublishedResult memory_result = run_published_case(memory);
  CHECK(memory_result.memory_only);
  CHECK(memory_result.predicted_memory_gb == Approx(peak_gb));
  CHECK(memory_result.error == 0.0);

  const PublishedResult timed = run_published_case(
      read_case(case_with(R"({"metric": "iteration_time_s", "value": )" + number(run.report.iteration_time_s * 1.5) +
                          R"(, "peak_memory_GB": )" + number(peak_gb * 1.25) + "}")));
  const SuiteSummary summary = summarize({timed, memory_result});
  CHECK(summary.cases == 1);
  CHECK(summary.memory_only_cases == 1);
  CHECK(summary.mean_abs_error == Approx(0.5));
  CHECK(summary.worst_case == "case");
  // Memory over both: 1 / 1.25 - 1 = -20%, and weft's peak against 10 GiB.
  CHECK(summary.memory_cases == 2);
  const double memory_error = std::abs(peak_gb / 10.73741824 - 1.0);
  CHECK(summary.memory_mean_abs_error == Approx((0.2 + memory_error) / 2));
  CHECK(summary.memory_worst_abs_error == Approx(std::max(0.2, memory_error)));
}

TEST_CASE("bad case files name the JSON path", "[calibration][suite][errors]") {
  CHECK_THROWS_WITH(read_case(case_with(R"({"out_of_memory": false})")),
                    Catch::Contains("published.out_of_memory: expected true (a run the source reports out of memory)"));
  CHECK_THROWS_WITH(read_case(case_with(R"({"out_of_memory": true, "value": 3})")),
                    Catch::Contains("published.value: a run out of memory has none"));
  CHECK_THROWS_WITH(read_case(case_with(R"({"metric": "tflops_per_gpu", "value": 100})")),
                    Catch::Contains("published: missing required field 'flops' (how the source counts FLOPs: "
                                    "megatron or narayanan-eq3)"));
  CHECK_THROWS_WITH(read_case(case_with(R"({"metric": "tokens_per_s", "value": 100, "flops": "megatron"})")),
                    Catch::Contains("published.flops: only tflops_per_gpu counts FLOPs"));
  CHECK_THROWS_WITH(read_case(case_with(R"({"peak_memory_GB": 10, "peak_memory_GiB": 9.3})")),
                    Catch::Contains("published.peak_memory_GiB: give the peak memory once, in GB or in GiB"));
  CHECK_THROWS_WITH(read_case(case_with(R"({"value": 3, "peak_memory_GB": 10})")),
                    Catch::Contains("published.value: needs published.metric (what the value measures)"));
  CHECK_THROWS_WITH(read_case(case_with(R"({"value": 3})")),
                    Catch::Contains("published: missing required field 'metric'"));
  CHECK_THROWS_WITH(read_case(case_with(R"({"peak_memory_GiB": -1})")), Catch::Contains("published.peak_memory_GiB"));
  CHECK_THROWS_WITH(read_case(case_with(R"({"metric": "mfu", "value": 0.4})")),
                    Catch::Contains("published.metric: 'mfu' is not one of iteration_time_s, tokens_per_s, "));
  CHECK_THROWS_WITH(read_case(case_with(R"({"metric": "iteration_time_s", "value": -3})")),
                    Catch::Contains("published.value"));
  std::string vlm = case_with(R"({"metric": "tflops_per_gpu", "value": 100, "flops": "narayanan-eq3"})");
  vlm.replace(
      vlm.find(kScenario), kScenario.size(),
      R"({"model": "vlm-s", "cluster": {"base": "h800-testbed", "gpus": 16}, "parallel": {"tp": 4, "pp": 4, "stage_layers": "parameters"},
                  "training": {"global_batch": 4, "seq_len": 8192, "images": 8}})");
  CHECK_THROWS_WITH(read_case(vlm), Catch::Contains("published.flops: narayanan-eq3 counts the FLOPs of one GPT"));
}

}  // namespace
}  // namespace weft
