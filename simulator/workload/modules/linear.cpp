#include "simulator/workload/modules/linear.hpp"

#include "simulator/workload/modules/op_factory.hpp"

namespace weft {

void Linear::emit(const ShardContext& context, const std::string& prefix, std::vector<Step>& steps) const {
  const std::int64_t tp = split_ == TpSplit::none ? 1 : context.tp;
  const std::int64_t rows = rows_ == Rows::tokens           ? context.tokens()
                            : rows_ == Rows::sharded_tokens ? context.sharded_tokens()
                                                            : context.micro_batch;
  const std::int64_t in = split_ == TpSplit::row ? in_ / tp : in_;
  const std::int64_t out = split_ == TpSplit::column ? out_ / tp : out_;
  const Bytes element = context.element_bytes();

  Step step;
  step.name = step_name(prefix, "");
  // With the weight stored [out, in], as torch.nn.Linear keeps it.
  step.forward = gemm_work(rows, out, in, context.dtype, Kernel::nt);      // Y = X W^T
  step.backward = gemm_work(rows, in, out, context.dtype, Kernel::nn);     // dX = dY W
  step.weight_grad = gemm_work(out, in, rows, context.dtype, Kernel::tn);  // dW = dY^T X
  // Rows every TP (and CP) rank computes alike count once in the model's FLOPs.
  const bool replicated = split_ == TpSplit::none && !(rows_ == Rows::sharded_tokens && context.sequence_parallel);
  const double copies = replicated ? static_cast<double>(context.tp) * (rows_ == Rows::samples ? context.cp : 1) : 1.0;
  step.model_flops = step.forward->flops / copies;
  step.output_bytes = rows * out * element;
  step.saved_bytes = rows * in * element;
  step.parameters = shares_weight_ ? 0 : in * out + (bias_ ? (split_ == TpSplit::column ? out : out_) : 0);
  step.shared_parameters = shares_weight_ ? in * out : 0;
  const bool regathers = split_ == TpSplit::column && context.sequence_parallel && context.tp > 1;
  if (regathers) {
    step.saved_bytes = context.sharded_tokens() * in * element;
    step.regather = communication_work(OpClass::allgather, rows * in * element);
    step.comm = CommGroupKind::tp;
  }
  step.weight_grad_saved_bytes = step.saved_bytes;  // dX = dY W^T needs only the weight
  steps.push_back(std::move(step));
}

}  // namespace weft
