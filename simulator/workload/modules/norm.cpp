#include "simulator/workload/modules/norm.hpp"

#include "simulator/workload/modules/op_factory.hpp"

namespace weft {

void Norm::emit(const ShardContext& context, const std::string& prefix, std::vector<Step>& steps) const {
  const std::int64_t tokens = context.sharded_tokens();
  const Bytes activation = tokens * width_ * context.element_bytes();
  const double elements = static_cast<double>(tokens * width_);
  Step step;
  step.name = step_name(prefix, "");
  step.forward = memory_bound_work(OpClass::norm, 2 * activation, 5.0 * elements, context.dtype, {tokens, width_});
  step.backward = memory_bound_work(OpClass::norm, 3 * activation, 8.0 * elements, context.dtype, {tokens, width_});
  step.output_bytes = activation;
  step.saved_bytes = activation;
  step.parameters = kind_ == NormKind::layernorm ? 2 * width_ : width_;
  steps.push_back(std::move(step));
}

}  // namespace weft
