#include "simulator/workload/modules/self_attention.hpp"

#include "simulator/workload/modules/elementwise.hpp"
#include "simulator/workload/modules/linear.hpp"
#include "simulator/workload/modules/tensor_parallel.hpp"

namespace weft {

SelfAttention::SelfAttention(std::string name, const ModelSpec& model, ContextParallelAlgorithm cp_algorithm)
    : Sequential(std::move(name)) {
  const std::int64_t h = model.hidden;
  const std::int64_t q = model.attention_width();
  add<TensorParallelEnter>("tp_enter", h);
  add<Linear>("qkv", h, q + 2 * model.kv_width(), model.qkv_bias || model.linear_bias, TpSplit::column);
  if (model.position == PositionEncoding::rope) {
    ElementwiseShape rope;
    rope.rows = Rows::tokens;
    rope.input_width = q + model.kv_width();  // queries and keys, rotated in place
    rope.output_width = q + model.kv_width();
    rope.tp_split = true;
    add<Elementwise>("rope", rope);
  }
  add<AttentionCore>("core", model, cp_algorithm);
  add<Linear>("proj", q, h, model.linear_bias, TpSplit::row);
  add<TensorParallelExit>("tp_exit", h);
}

}  // namespace weft
