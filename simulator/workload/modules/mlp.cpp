#include "simulator/workload/modules/mlp.hpp"

#include "simulator/workload/modules/elementwise.hpp"
#include "simulator/workload/modules/linear.hpp"
#include "simulator/workload/modules/tensor_parallel.hpp"

namespace weft {

Mlp::Mlp(std::string name, const ModelSpec& model) : Sequential(std::move(name)) {
  const std::int64_t h = model.hidden;
  const std::int64_t f = model.ffn_hidden;
  const bool gated = model.activation == Activation::swiglu;
  add<TensorParallelEnter>("tp_enter", h);
  add<Linear>("fc1", h, gated ? 2 * f : f, model.linear_bias, TpSplit::column);
  ElementwiseShape activation;
  activation.rows = Rows::tokens;
  activation.input_width = gated ? 2 * f : f;
  activation.output_width = f;
  activation.saved_width = activation.input_width;  // the activation's input, for its derivative
  activation.tp_split = true;
  add<Elementwise>(gated ? "swiglu" : "gelu", activation);
  add<Linear>("fc2", f, h, model.linear_bias, TpSplit::row);
  add<TensorParallelExit>("tp_exit", h);
}

}  // namespace weft
