#include "simulator/workload/modules/output_head.hpp"

#include "simulator/workload/modules/elementwise.hpp"
#include "simulator/workload/modules/linear.hpp"
#include "simulator/workload/modules/norm.hpp"
#include "simulator/workload/modules/op_factory.hpp"
#include "simulator/workload/modules/tensor_parallel.hpp"

namespace weft {

void CrossEntropy::emit(const ShardContext& context, const std::string& prefix, std::vector<Step>& steps) const {
  const std::int64_t tokens = context.tokens();
  const std::int64_t vocab = vocab_ / context.tp;
  const Bytes logits = tokens * vocab * context.element_bytes();
  const Bytes probabilities = tokens * vocab * 4;  // fp32
  const double elements = static_cast<double>(tokens * vocab);

  Step loss;
  loss.name = step_name(prefix, "");
  loss.forward = memory_bound_work(OpClass::loss, logits + probabilities, 4.0 * elements, Dtype::fp32, {tokens, vocab});
  loss.backward = memory_bound_work(OpClass::loss, probabilities + logits, elements, Dtype::fp32, {tokens, vocab});
  loss.output_bytes = tokens * 4;
  loss.saved_bytes = probabilities;
  steps.push_back(std::move(loss));

  if (context.tp <= 1) return;
  Step reduce;
  reduce.name = step_name(prefix, "allreduce");
  reduce.comm = CommGroupKind::tp;
  reduce.forward = communication_work(OpClass::allreduce, tokens * 3 * 4);  // max, sum and target, fp32
  reduce.output_bytes = tokens * 4;
  steps.push_back(std::move(reduce));
}

LanguageModelHead::LanguageModelHead(std::string name, const ModelSpec& model, bool shares_embedding)
    : Sequential(std::move(name)) {
  add<Norm>("final_norm", model.hidden, model.norm);
  add<TensorParallelEnter>("tp_enter", model.hidden);
  auto& logits = add<Linear>("logits", model.hidden, model.padded_vocab(), false, TpSplit::column);
  if (shares_embedding) logits.share_weight();
  add<CrossEntropy>("cross_entropy", model.padded_vocab());
}

RegressionHead::RegressionHead(std::string name, const ModelSpec& model, bool loss) : Sequential(std::move(name)) {
  add<Norm>("final_norm", model.hidden, model.norm);
  if (model.kind == ModelKind::dit) {
    add<Linear>("final_adaln", model.hidden, 2 * model.hidden, true, TpSplit::none, Rows::samples);
    ElementwiseShape modulate;
    modulate.input_width = model.hidden;
    modulate.output_width = model.hidden;
    modulate.saved_width = model.hidden;
    add<Elementwise>("final_modulate", modulate);
  }
  std::int64_t width = model.hidden;
  if (model.output_width > 0) {
    add<Linear>("output", model.hidden, model.output_width, true, TpSplit::none, Rows::sharded_tokens);
    width = model.output_width;
  }
  if (!loss) return;
  ElementwiseShape mse;
  mse.input_width = 2 * width;  // prediction and target
  mse.output_width = width;
  mse.saved_width = width;
  add<Elementwise>("mse_loss", mse);
}

}  // namespace weft
