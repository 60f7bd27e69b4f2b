#include "simulator/workload/modules/elementwise.hpp"

#include <stdexcept>

#include "simulator/workload/modules/op_factory.hpp"

namespace weft {

ElementwiseShape elementwise_kernel_shape(Kernel kernel, std::int64_t width) {
  ElementwiseShape shape;
  shape.kernel = kernel;
  shape.output_width = width;
  switch (kernel) {
    case Kernel::gelu_fwd:
      shape.input_width = width;
      shape.saved_width = width;
      break;
    case Kernel::add:
      shape.input_width = 2 * width;
      break;
    case Kernel::dropout:
      shape.input_width = width;
      shape.mask_bytes = width;
      break;
    case Kernel::swiglu_fwd:
    case Kernel::swiglu_unfused_fwd:
      shape.input_width = 2 * width;
      shape.saved_width = 2 * width;
      break;
    default:
      throw std::logic_error("elementwise_kernel_shape: not an elementwise kernel");
  }
  return shape;
}

OpWork elementwise_forward_work(const ElementwiseShape& shape, std::int64_t rows, std::int64_t split, Dtype dtype,
                                const KernelChoices& kernels) {
  const Bytes element = bytes_per_element(dtype);
  const Bytes input = rows * shape.input_width / split * element;
  const Bytes output = rows * shape.output_width / split * element;
  const Bytes mask = rows * shape.mask_bytes / split;
  OpWork work = memory_bound_work(OpClass::elementwise, input + output + mask,
                                  static_cast<double>(rows * shape.output_width / split), dtype,
                                  {rows, shape.output_width / split});
  work.kernel = shape.kernel == Kernel::swiglu_fwd && !kernels.fused_swiglu ? Kernel::swiglu_unfused_fwd : shape.kernel;
  return work;
}

void Elementwise::emit(const ShardContext& context, const std::string& prefix, std::vector<Step>& steps) const {
  const std::int64_t rows = shape_.rows == Rows::tokens           ? context.tokens()
                            : shape_.rows == Rows::sharded_tokens ? context.sharded_tokens()
                                                                  : context.micro_batch;
  const std::int64_t split = shape_.tp_split ? context.tp : 1;
  const Bytes element = context.element_bytes();
  const Bytes input = rows * shape_.input_width / split * element;
  const Bytes output = rows * shape_.output_width / split * element;
  const Bytes saved = rows * shape_.saved_width / split * element;
  const Bytes mask = rows * shape_.mask_bytes / split;
  const double elements = static_cast<double>(rows * shape_.output_width / split);

  Step step;
  step.name = step_name(prefix, "");
  step.forward = elementwise_forward_work(shape_, rows, split, context.dtype, context.kernels);
  if (shape_.has_input_gradient) {
    step.backward = memory_bound_work(OpClass::elementwise, output + saved + mask + input, 2.0 * elements,
                                      context.dtype, {rows, shape_.input_width / split});
  }
  step.output_bytes = output;
  step.saved_bytes = saved + mask;
  steps.push_back(std::move(step));
}

}  // namespace weft
