#include "simulator/workload/modules/output_head.hpp"

#include "simulator/workload/modules/cross_entropy.hpp"
#include "simulator/workload/modules/elementwise.hpp"
#include "simulator/workload/modules/linear.hpp"
#include "simulator/workload/modules/norm.hpp"
#include "simulator/workload/modules/op_factory.hpp"
#include "simulator/workload/modules/tensor_parallel.hpp"

namespace weft {

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
