#include "simulator/workload/model.hpp"

#include "simulator/workload/modules/embedding.hpp"
#include "simulator/workload/modules/linear.hpp"
#include "simulator/workload/modules/norm.hpp"
#include "simulator/workload/modules/output_head.hpp"
#include "simulator/workload/modules/transformer_layer.hpp"

namespace weft {
namespace {

std::vector<Step> emit(const Module& module, const ShardContext& context, const std::string& prefix) {
  std::vector<Step> steps;
  module.emit(context, prefix, steps);
  return steps;
}

}  // namespace

Model::Model(ModelSpec spec, ContextParallelAlgorithm cp_algorithm, ModelHead head, std::string prefix)
    : spec_(std::move(spec)), prefix_(std::move(prefix)) {
  const bool loss = head == ModelHead::loss;
  if (spec_.has_vocabulary()) {
    input_ = std::make_unique<TokenEmbedding>("embedding", spec_);
    if (loss) {
      output_ = std::make_unique<LanguageModelHead>("head", spec_, false);
      output_sharing_embedding_ = std::make_unique<LanguageModelHead>("head", spec_, spec_.tied_embeddings);
    } else {
      auto features = std::make_unique<Sequential>("head");
      features->add<Norm>("final_norm", spec_.hidden, spec_.norm);
      output_ = std::move(features);
    }
  } else {
    input_ = std::make_unique<Linear>("patch_embedding", spec_.patch_input, spec_.hidden, true, TpSplit::none,
                                      Rows::sharded_tokens);
    output_ = std::make_unique<RegressionHead>("head", spec_, loss);
  }
  layer_ = std::make_unique<TransformerLayer>("", spec_, cp_algorithm);
}

std::vector<Step> Model::input_steps(const ShardContext& context) const {
  return emit(*input_, context, prefix_ + "input.");
}

std::string Model::layer_prefix(int layer) const { return prefix_ + "L" + std::to_string(layer) + "."; }

std::vector<Step> Model::layer_steps(const ShardContext& context, int layer) const {
  const std::string prefix = layer_prefix(layer);
  EmittedLayer emitted;
  {
    const std::lock_guard lock(last_emitted_mutex_);
    if (!last_emitted_ || last_emitted_->context != context) {
      last_emitted_ = EmittedLayer{context, layer, emit(*layer_, context, prefix)};
    }
    emitted = *last_emitted_;
  }
  if (emitted.layer != layer) {
    const std::size_t emitted_prefix = layer_prefix(emitted.layer).size();
    for (Step& step : emitted.steps) step.name.replace(0, emitted_prefix, prefix);
  }
  return std::move(emitted.steps);
}

std::vector<Step> Model::output_steps(const ShardContext& context, bool shares_embedding) const {
  const Module& head = shares_embedding && output_sharing_embedding_ ? *output_sharing_embedding_ : *output_;
  return emit(head, context, prefix_ + "output.");
}

std::int64_t Model::parameter_count() const {
  const ShardContext whole;  // no parallelism: every parameter once
  return parameters_of(input_steps(whole)) + std::int64_t{spec_.layers} * parameters_of(layer_steps(whole, 0)) +
         parameters_of(output_steps(whole, true));
}

}  // namespace weft
