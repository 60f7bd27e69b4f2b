#include <fmt/format.h>
#include <catch2/catch.hpp>

#include <algorithm>
#include <string>
#include <string_view>

#include "tests/simulator/workload/training_test_support.hpp"

namespace weft {
namespace {

using Catch::Matchers::Contains;
using test::kSmallLlama;
using test::run_training;
using test::scenario_from;

// The small Llama in 4 stages of 2 layers, 2 pipelines, 4 microbatches each, on 8 H100s;
// `redundant` turns Bamboo's redundant computation on.
std::string bamboo_text(bool redundant, const std::string& extra = "") {
  return fmt::format(R"({{"model": {}, "cluster": {{"base": "dgx-h100", "gpus": 8, "gpus_per_node": 4}},
                         "parallel": {{"pp": 4, "dp": 2, "redundant_computation": {}{}}},
                         "training": {{"global_batch": 8, "seq_len": 2048}}}})",
                     kSmallLlama, redundant, extra);
}

bool has(std::string_view text, std::string_view part) { return text.find(part) != std::string_view::npos; }

// The time and number of `device`'s ops whose names hold `part` and not `unless`.
struct OpTotal {
  TimeNs time = 0;
  int count = 0;
};
OpTotal ops_named(const test::TrainingRun& run, DeviceId device, std::string_view part, std::string_view unless) {
  OpTotal total;
  const Graph& graph = run.workload.graph;
  for (std::uint32_t i = 0; i < graph.op_count(); ++i) {
    const OpId op(i);
    const std::string_view name = graph.op_name(op);
    if (graph.op_device(op) != device || !has(name, part) || (!unless.empty() && has(name, unless))) continue;
    total.time += run.result.duration(op);
    ++total.count;
  }
  return total;
}

TEST_CASE("Bamboo: each stage runs its successor's forward of every microbatch, kernel for kernel",
          "[workload][bamboo]") {
  const auto plain = run_training(scenario_from(bamboo_text(false)), {.composites = false});
  const auto bamboo = run_training(scenario_from(bamboo_text(true)), {.composites = false});
  for (int stage = 0; stage < 4; ++stage) {
    INFO("stage " << stage);
    const int successor = (stage + 1) % 4;  // the last stage backs up the first
    const OpTotal forward =
        ops_named(plain, plain.workload.ranks[static_cast<std::size_t>(successor)].device, " fwd mb", "redundant");
    const OpTotal redundant =
        ops_named(bamboo, bamboo.workload.ranks[static_cast<std::size_t>(stage)].device, "redundant fwd mb", "");
    REQUIRE(forward.count > 0);
    CHECK(redundant.count == forward.count);
    CHECK(redundant.time == forward.time);
    // Its own passes cost what they did: the stage computes its successor's forward on top.
    CHECK(bamboo.report.stages[static_cast<std::size_t>(stage)].compute_s ==
          Approx(plain.report.stages[static_cast<std::size_t>(stage)].compute_s +
                 1e-9 * static_cast<double>(forward.time))
              .epsilon(1e-9));
  }
  CHECK(bamboo.report.iteration_time_s > plain.report.iteration_time_s);
  CHECK(bamboo.report.model_flops_per_iteration == plain.report.model_flops_per_iteration);
}

TEST_CASE("Bamboo: each stage holds its successor's parameters and optimizer states, not its gradients",
          "[workload][bamboo]") {
  const auto plain = run_training(scenario_from(bamboo_text(false, R"(, "zero": 1)")));
  const auto bamboo = run_training(scenario_from(bamboo_text(true, R"(, "zero": 1)")));
  for (std::size_t stage = 0; stage < 4; ++stage) {
    INFO("stage " << stage);
    const StaticMemory& own = plain.report.stages[stage].static_memory;
    const StaticMemory& next = plain.report.stages[(stage + 1) % 4].static_memory;
    const StaticMemory& held = bamboo.report.stages[stage].static_memory;
    CHECK(held.parameters == own.parameters + next.parameters);
    CHECK(held.optimizer_states == own.optimizer_states + next.optimizer_states);
    CHECK(held.gradients == own.gradients);
  }
}

TEST_CASE("Bamboo: a redundant forward keeps what the successor's forward saves until its backward ends",
          "[workload][bamboo]") {
  const auto plain = run_training(scenario_from(bamboo_text(false)), {.composites = false});
  const auto bamboo = run_training(scenario_from(bamboo_text(true)), {.composites = false});
  const Graph& graph = plain.workload.graph;
  const Graph& held = bamboo.workload.graph;
  for (int stage = 0; stage < 4; ++stage) {
    INFO("stage " << stage);
    const int successor = (stage + 1) % 4;
    const DeviceId next = plain.workload.ranks[static_cast<std::size_t>(successor)].device;
    // By hand from the plain graph: the successor's forward of microbatch 0 saves the tensors its
    // backward (input and weight gradients) reads, and hands on its output (an activation, or on
    // the last stage the loss).
    Bytes expected = 0;
    for (std::uint32_t i = 0; i < graph.op_count(); ++i) {
      const OpId op(i);
      if (graph.op_device(op) != next || !has(graph.op_name(op), "mb0")) continue;
      if (!has(graph.op_name(op), " fwd ")) continue;
      for (TensorId tensor : graph.op_outputs(op)) {
        bool saved = false, handed_on = false;
        for (OpId reader : graph.tensor_consumers(tensor)) {
          saved = saved || has(graph.op_name(reader), " bwd ") || has(graph.op_name(reader), " wgrad ");
          handed_on =
              handed_on || has(graph.op_name(reader), "send activation") || has(graph.op_name(reader), "loss bwd");
        }
        if (saved || handed_on) expected += graph.tensor_bytes(tensor);
      }
    }
    // What stage's release of microbatch 0 frees.
    Bytes released = 0;
    OpId release;
    for (std::uint32_t i = 0; i < held.op_count(); ++i) {
      const OpId op(i);
      if (held.op_device(op) != bamboo.workload.ranks[static_cast<std::size_t>(stage)].device ||
          held.op_name(op) != "release redundant activations mb0") {
        continue;
      }
      release = op;
      for (TensorId tensor : held.op_inputs(op)) released += held.tensor_bytes(tensor);
    }
    REQUIRE(release.valid());
    CHECK(released == expected);
    // It waits for the successor's backward of the microbatch.
    TimeNs successor_backward_end = 0;
    for (std::uint32_t i = 0; i < held.op_count(); ++i) {
      const OpId op(i);
      if (held.op_device(op) == bamboo.workload.ranks[static_cast<std::size_t>(successor)].device &&
          has(held.op_name(op), " bwd mb0")) {
        successor_backward_end = std::max(successor_backward_end, bamboo.result.end(op));
      }
    }
    CHECK(successor_backward_end > 0);
    CHECK(bamboo.result.start(release) >= successor_backward_end);
  }
}

TEST_CASE("Bamboo: folded, unfolded and with passes as templates, the same iteration", "[workload][bamboo]") {
  const TrainingScenario scenario = scenario_from(bamboo_text(true));
  const auto folded = run_training(scenario);
  const auto unfolded = run_training(scenario, true);
  CHECK(unfolded.result.makespan == folded.result.makespan);
  CHECK(unfolded.report.stages[0].peak_memory == folded.report.stages[0].peak_memory);
  CHECK(run_training(scenario, {.composites = false}).result.makespan == folded.result.makespan);
}

TEST_CASE("Bamboo's redundant computation refuses plans it does not run", "[workload][bamboo][errors]") {
  const auto refused = [](const std::string& extra) {
    try {
      scenario_from(bamboo_text(true, extra));
    } catch (const InvalidPlan& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  CHECK_THAT(refused(R"(, "schedule": "gpipe")"),
             Contains("parallel.redundant_computation") && Contains("set schedule to '1f1b'"));
  CHECK_THAT(refused(R"(, "zero": 3)"), Contains("set zero to 0, 1 or 2"));
  CHECK_THAT(refused(R"(, "vpp": 2, "schedule": "interleaved")"), Contains("1f1b"));
  try {
    scenario_from(fmt::format(R"({{"model": {}, "cluster": {{"base": "dgx-h100", "gpus": 8}},
                                   "parallel": {{"redundant_computation": true}},
                                   "training": {{"global_batch": 8, "seq_len": 2048}}}})",
                              kSmallLlama));
    FAIL("a single stage backed up");
  } catch (const InvalidPlan& e) {
    CHECK_THAT(std::string(e.what()), Contains("parallel.redundant_computation") && Contains("set pp >= 2"));
  }
}

}  // namespace
}  // namespace weft
