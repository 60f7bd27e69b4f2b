#include "simulator/workload/frozen_rule.hpp"

#include <algorithm>

namespace weft {

void apply_frozen_rule(std::span<Step> steps, const ModuleTraining& module, bool trainable_before) {
  const double flops_factor = module.frozen ? (module.trainable_upstream ? 2.0 : 1.0) : 3.0;
  for (Step& step : steps) {
    step.trainable = !module.frozen;
    step.training_flops_factor = flops_factor;
    // A step whose parameter gradients its backward op computes (a norm's) keeps that op.
    const bool grads_in_backward = !module.frozen && step.parameters > 0 && !step.weight_grad;
    if (module.frozen) {
      step.weight_grad.reset();
      step.regather.reset();
      step.saved_bytes -= step.weight_grad_saved_bytes;
      step.weight_grad_saved_bytes = 0;
    }
    if (!trainable_before && !grads_in_backward) step.backward.reset();
    if (!step.backward && !step.weight_grad) step.saved_bytes = 0;  // nothing reads them
    step.recomputable_bytes = std::min(step.recomputable_bytes, step.saved_bytes);
    if (!module.frozen && step.parameters > 0) trainable_before = true;
  }
}

}  // namespace weft
