#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "simulator/workload/model.hpp"
#include "tests/simulator/workload/training_test_support.hpp"

namespace weft {
namespace {

using test::kSmallLlama;
using test::run_training;
using test::scenario_from;

// kSmallLlama on one H100 (no communication), 2 microbatches, under Megatron-Core with `framework_us`
// per layer pass; the host's issue and the kernel gap off, so that every op on the compute stream
// runs back to back and the iteration is the sum of their times.
std::string one_gpu(double framework_us, const std::string& recompute = "none") {
  return R"({"model": )" + kSmallLlama + R"(, "cluster": {"base": "dgx-h100", "gpus": 1},
             "stack": {"base": "megatron-core", "layer_framework_us": )" +
         std::to_string(framework_us) + R"(}, "parallel": {"recompute": ")" + recompute + R"("},
             "training": {"global_batch": 2, "micro_batch": 1, "seq_len": 1024},
             "options": {"host_issue": false, "kernel_gap": false}})";
}

TEST_CASE("a stack's framework time per layer is a host step before each transformer layer", "[workload][stack]") {
  const TrainingScenario scenario = scenario_from(one_gpu(120));
  CHECK(scenario.stack.layer_framework_ns == 120'000);
  const Model model(scenario.model.single());
  const std::vector<Step> steps = model.layer_steps(scenario.shard_context(), 0);
  REQUIRE_FALSE(steps.empty());
  const Step& first = steps.front();
  CHECK(first.name.ends_with("framework"));
  REQUIRE(first.forward);
  REQUIRE(first.backward);
  CHECK(first.forward->op_class == OpClass::host);
  CHECK(first.forward->dims().size() == 1);
  CHECK(first.forward->dims()[0] == 120'000);
  CHECK(*first.backward == *first.forward);
  CHECK_FALSE(first.weight_grad);
  CHECK(first.output_bytes == 0);
  CHECK(first.saved_bytes == 0);
  // One framework step per layer, none without framework time.
  int framework_steps = 0;
  for (const Step& step : steps) framework_steps += step.name.ends_with("framework") ? 1 : 0;
  CHECK(framework_steps == 1);
  const TrainingScenario none = scenario_from(one_gpu(0));
  for (const Step& step : Model(none.model.single()).layer_steps(none.shard_context(), 0)) {
    CHECK_FALSE(step.name.ends_with("framework"));
  }
}

TEST_CASE("framework time adds its time per layer pass to a one-GPU iteration, exactly", "[workload][stack]") {
  // By hand: 8 layers, 2 microbatches, a forward and a backward pass each: 32 layer passes; full
  // recomputation runs each layer's forward again before its backward pass: 48. The memory peak
  // does not move (the framework keeps no tensor).
  const double us = 75.0;
  const TimeNs per_pass = 75'000;
  const auto plain = run_training(scenario_from(one_gpu(0)));
  const auto framework = run_training(scenario_from(one_gpu(us)));
  CHECK(framework.result.makespan - plain.result.makespan == 32 * per_pass);
  CHECK(framework.report.stages.front().framework_s == Approx(32 * 75e-6).epsilon(1e-12));
  CHECK(plain.report.stages.front().framework_s == 0.0);
  CHECK(framework.report.stages.front().peak_memory == plain.report.stages.front().peak_memory);
  const auto recompute_plain = run_training(scenario_from(one_gpu(0, "full")));
  const auto recompute = run_training(scenario_from(one_gpu(us, "full")));
  CHECK(recompute.result.makespan - recompute_plain.result.makespan == 48 * per_pass);
}

TEST_CASE("framework time is the host's: a GPU at half speed does not stretch it", "[workload][stack][stragglers]") {
  auto slow = [](double us) {
    std::string text = one_gpu(us);
    const std::string cluster = R"("gpus": 1})";
    return text.replace(text.find(cluster), cluster.size(),
                        R"("gpus": 1, "stragglers": {"gpus": [{"gpu": 0, "speed": 0.5}]}})");
  };
  const auto healthy = run_training(scenario_from(one_gpu(0)));
  const auto half_speed = run_training(scenario_from(slow(0)));
  const auto half_speed_framework = run_training(scenario_from(slow(40)));
  REQUIRE(half_speed.result.makespan == 2 * healthy.result.makespan);
  CHECK(half_speed_framework.result.makespan - half_speed.result.makespan == 32 * 40'000);
}

}  // namespace
}  // namespace weft
