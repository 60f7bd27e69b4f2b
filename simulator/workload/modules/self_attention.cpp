#include "simulator/workload/modules/self_attention.hpp"

#include "simulator/workload/modules/elementwise.hpp"
#include "simulator/workload/modules/linear.hpp"
#include "simulator/workload/modules/tensor_parallel.hpp"

namespace weft {

SelfAttention::SelfAttention(std::string name, const ModelSpec& model, ContextParallelAlgorithm cp_algorithm)
    : Sequential(std::move(name)) {
  const std::int64_t h = model.hidden;
  add<TensorParallelEnter>("tp_enter", h);
  add<Linear>("qkv", h, h + 2 * model.kv_width(), model.qkv_bias || model.linear_bias, TpSplit::column);
  if (model.position == PositionEncoding::rope) {
    ElementwiseShape rope;
    rope.rows = Rows::tokens;
    rope.input_width = h + model.kv_width();  // queries and keys, rotated in place
    rope.output_width = h + model.kv_width();
    rope.tp_split = true;
    add<Elementwise>("rope", rope);
  }
  add<AttentionCore>("core", model, cp_algorithm);
  add<Linear>("proj", h, h, model.linear_bias, TpSplit::row);
  add<TensorParallelExit>("tp_exit", h);
}

}  // namespace weft
