#include "simulator/workload/modules/mlp.hpp"

#include "simulator/workload/modules/elementwise.hpp"
#include "simulator/workload/modules/linear.hpp"
#include "simulator/workload/modules/tensor_parallel.hpp"

namespace weft {

Mlp::Mlp(std::string name, const ModelSpec& model)
    : Mlp(std::move(name), model.hidden, model.ffn_hidden, model.hidden, model.activation, model.linear_bias) {}

Mlp::Mlp(std::string name, std::int64_t in, std::int64_t ffn, std::int64_t out, Activation nonlinearity, bool bias)
    : Sequential(std::move(name)) {
  const std::int64_t f = ffn;
  const bool gated = nonlinearity == Activation::swiglu;
  add<TensorParallelEnter>("tp_enter", in);
  add<Linear>("fc1", in, gated ? 2 * f : f, bias, TpSplit::column);
  // Keeps the activation's input, for its derivative.
  ElementwiseShape activation = elementwise_kernel_shape(gated ? Kernel::swiglu_fwd : Kernel::gelu_fwd, f);
  activation.rows = Rows::tokens;
  activation.tp_split = true;
  add<Elementwise>(gated ? "swiglu" : "gelu", activation);
  add<Linear>("fc2", f, out, bias, TpSplit::row);
  add<TensorParallelExit>("tp_exit", out);
}

}  // namespace weft
