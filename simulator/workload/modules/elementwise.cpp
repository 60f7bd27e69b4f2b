#include "simulator/workload/modules/elementwise.hpp"

#include "simulator/workload/modules/op_factory.hpp"

namespace weft {

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
  step.forward = memory_bound_work(OpClass::elementwise, input + output + mask, elements, context.dtype,
                                   {rows, shape_.output_width / split});
  if (shape_.has_input_gradient) {
    step.backward = memory_bound_work(OpClass::elementwise, output + saved + mask + input, 2.0 * elements,
                                      context.dtype, {rows, shape_.input_width / split});
  }
  step.output_bytes = output;
  step.saved_bytes = saved + mask;
  steps.push_back(std::move(step));
}

}  // namespace weft
