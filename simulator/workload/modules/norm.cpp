#include "simulator/workload/modules/norm.hpp"

#include "simulator/workload/modules/op_factory.hpp"

namespace weft {

OpWork norm_work(NormKind kind, bool backward, std::int64_t rows, std::int64_t width, Dtype dtype) {
  const Bytes activation = rows * width * bytes_per_element(dtype);
  const double elements = static_cast<double>(rows * width);
  OpWork work = memory_bound_work(OpClass::norm, (backward ? 3 : 2) * activation, (backward ? 8.0 : 5.0) * elements,
                                  dtype, {rows, width});
  const bool layernorm = kind == NormKind::layernorm;
  work.kernel = backward ? (layernorm ? Kernel::layernorm_bwd : Kernel::rmsnorm_bwd)
                         : (layernorm ? Kernel::layernorm_fwd : Kernel::rmsnorm_fwd);
  return work;
}

void Norm::emit(const ShardContext& context, const std::string& prefix, std::vector<Step>& steps) const {
  const std::int64_t tokens = context.sharded_tokens();
  const Bytes activation = tokens * width_ * context.element_bytes();
  Step step;
  step.name = step_name(prefix, "");
  step.forward = norm_work(kind_, false, tokens, width_, context.dtype);
  step.backward = norm_work(kind_, true, tokens, width_, context.dtype);
  step.output_bytes = activation;
  step.saved_bytes = activation;
  step.parameters = kind_ == NormKind::layernorm ? 2 * width_ : width_;
  steps.push_back(std::move(step));
}

}  // namespace weft
