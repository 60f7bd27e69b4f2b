#include "simulator/workload/modules/tensor_parallel.hpp"

#include "simulator/workload/modules/op_factory.hpp"

namespace weft {
namespace {

Step tp_step(const std::string& name, const ShardContext& context, std::int64_t width) {
  Step step;
  step.name = name;
  step.comm = CommGroupKind::tp;
  step.output_bytes =
      (context.sequence_parallel ? context.tokens() : context.sharded_tokens()) * width * context.element_bytes();
  return step;
}

}  // namespace

void TensorParallelEnter::emit(const ShardContext& context, const std::string& prefix, std::vector<Step>& steps) const {
  if (context.tp <= 1) return;
  Step step = tp_step(step_name(prefix, ""), context, width_);
  const Bytes full = context.tokens() * width_ * context.element_bytes();
  if (context.sequence_parallel) {
    step.forward = communication_work(OpClass::allgather, full);
    step.backward = communication_work(OpClass::reducescatter, full);
  } else {
    step.backward = communication_work(OpClass::allreduce, full);
  }
  steps.push_back(std::move(step));
}

void TensorParallelExit::emit(const ShardContext& context, const std::string& prefix, std::vector<Step>& steps) const {
  if (context.tp <= 1) return;
  Step step = tp_step(step_name(prefix, ""), context, width_);
  step.output_bytes = context.sharded_tokens() * width_ * context.element_bytes();
  const Bytes full = context.tokens() * width_ * context.element_bytes();
  if (context.sequence_parallel) {
    step.forward = communication_work(OpClass::reducescatter, full);
    step.backward = communication_work(OpClass::allgather, full);
  } else {
    step.forward = communication_work(OpClass::allreduce, full);
  }
  steps.push_back(std::move(step));
}

}  // namespace weft
