// The frozen rule (papers/004 §4.2): which gradients each step of a module computes.
#include "simulator/workload/frozen_rule.hpp"

#include <catch2/catch.hpp>
#include <vector>

namespace weft {
namespace {

OpWork work(double flops) {
  OpWork w;
  w.op_class = OpClass::gemm;
  w.flops = flops;
  return w;
}

// A linear layer (weight gradient reads its saved input), a norm (parameter gradients inside its
// backward op) and an attention core (no parameters; part of what it saves is recomputable).
Step linear() {
  Step step;
  step.forward = work(1), step.backward = work(1), step.weight_grad = work(1);
  step.saved_bytes = step.weight_grad_saved_bytes = 100;
  step.parameters = 10;
  return step;
}
Step norm() {
  Step step;
  step.forward = work(1), step.backward = work(1);
  step.saved_bytes = 50;
  step.parameters = 4;
  return step;
}
Step attention() {
  Step step;
  step.forward = work(1), step.backward = work(1);
  step.saved_bytes = 80;
  step.recomputable_bytes = 30;
  return step;
}

TEST_CASE("a trainable module's first parameter step computes no input gradient", "[workload][frozen]") {
  std::vector<Step> steps = {linear(), norm(), attention()};
  apply_frozen_rule(steps, {.frozen = false, .trainable_upstream = false}, false);
  CHECK_FALSE(steps[0].backward);
  CHECK(steps[0].weight_grad);
  CHECK(steps[0].saved_bytes == 100);
  CHECK(steps[1].backward);
  CHECK(steps[2].backward);
  CHECK(steps[2].saved_bytes == 80);
  for (const Step& step : steps) {
    CHECK(step.trainable);
    CHECK(step.training_flops_factor == 3.0);
  }
}

TEST_CASE("a trainable norm keeps its backward op for its parameter gradients", "[workload][frozen]") {
  std::vector<Step> steps = {norm(), linear()};
  apply_frozen_rule(steps, {.frozen = false, .trainable_upstream = false}, false);
  CHECK(steps[0].backward);
  CHECK(steps[0].saved_bytes == 50);
  CHECK(steps[1].backward);  // the norm's parameters lie upstream
}

TEST_CASE("a frozen module with nothing trainable upstream does no backward work", "[workload][frozen]") {
  std::vector<Step> steps = {linear(), norm(), attention()};
  apply_frozen_rule(steps, {.frozen = true, .trainable_upstream = false}, false);
  for (const Step& step : steps) {
    CHECK_FALSE(step.backward);
    CHECK_FALSE(step.weight_grad);
    CHECK(step.saved_bytes == 0);
    CHECK(step.recomputable_bytes == 0);
    CHECK_FALSE(step.trainable);
    CHECK(step.training_flops_factor == 1.0);
  }
}

TEST_CASE("a frozen module after a trainable one passes input gradients on", "[workload][frozen]") {
  std::vector<Step> steps = {linear(), norm(), attention()};
  apply_frozen_rule(steps, {.frozen = true, .trainable_upstream = true}, true);
  for (const Step& step : steps) {
    CHECK(step.backward);
    CHECK_FALSE(step.weight_grad);
    CHECK(step.training_flops_factor == 2.0);
  }
  CHECK(steps[0].saved_bytes == 0);  // dX = dY W^T needs the weight, not the input
  CHECK(steps[1].saved_bytes == 50);
  CHECK(steps[2].saved_bytes == 80);
  CHECK(steps[2].recomputable_bytes == 30);
}

}  // namespace
}  // namespace weft
