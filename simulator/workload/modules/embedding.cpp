#include "simulator/workload/modules/embedding.hpp"

#include "simulator/workload/modules/elementwise.hpp"
#include "simulator/workload/modules/op_factory.hpp"
#include "simulator/workload/modules/tensor_parallel.hpp"

namespace weft {

void EmbeddingLookup::emit(const ShardContext& context, const std::string& prefix, std::vector<Step>& steps) const {
  // Vocab-parallel lookups cover every token (zeros outside the shard); position lookups only
  // the rank's sequence-parallel shard.
  const std::int64_t tokens = vocab_parallel_ ? context.tokens() : context.sharded_tokens();
  const Bytes activation = tokens * width_ * context.element_bytes();
  Step step;
  step.name = step_name(prefix, "");
  step.forward = memory_bound_work(OpClass::embedding, 2 * activation, 0.0, context.dtype, {tokens, width_});
  step.weight_grad = memory_bound_work(OpClass::embedding, 2 * activation, static_cast<double>(tokens * width_),
                                       context.dtype, {tokens, width_});
  step.output_bytes = activation;
  step.parameters = (vocab_parallel_ ? rows_ / context.tp : rows_) * width_;
  steps.push_back(std::move(step));
}

TokenEmbedding::TokenEmbedding(std::string name, const ModelSpec& model) : Sequential(std::move(name)) {
  add<EmbeddingLookup>("tokens", model.padded_vocab(), model.hidden, true);
  add<TensorParallelExit>("tp_reduce", model.hidden);
  if (model.position == PositionEncoding::learned) {
    add<EmbeddingLookup>("positions", model.max_positions, model.hidden, false);
    ElementwiseShape add_positions;
    add_positions.input_width = 2 * model.hidden;
    add_positions.output_width = model.hidden;
    add<Elementwise>("add_positions", add_positions);
  }
  if (model.dropout > 0.0) {
    ElementwiseShape dropout;
    dropout.input_width = model.hidden;
    dropout.output_width = model.hidden;
    dropout.mask_bytes = model.hidden;
    add<Elementwise>("dropout", dropout);
  }
}

}  // namespace weft
