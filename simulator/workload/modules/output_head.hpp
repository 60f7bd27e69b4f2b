#pragma once

#include "simulator/workload/model_spec.hpp"
#include "simulator/workload/modules/module.hpp"

namespace weft {

// Vocab-parallel cross-entropy (Megatron): the softmax over each rank's vocabulary shard in fp32,
// kept for the backward pass, and one all-reduce of the per-token max, sum and target logit.
class CrossEntropy : public Module {
 public:
  CrossEntropy(std::string name, std::int64_t vocab) : Module(std::move(name)), vocab_(vocab) {}
  void emit(const ShardContext& context, const std::string& prefix, std::vector<Step>& steps) const override;

 private:
  std::int64_t vocab_;
};

// Decoder output: final norm, LM head (column split over the vocabulary) and cross-entropy.
// With `shares_embedding`, the head's weight is the embedding table already counted.
class LanguageModelHead : public Sequential {
 public:
  LanguageModelHead(std::string name, const ModelSpec& model, bool shares_embedding);
};

// Encoder or DiT output: final norm (and adaLN modulation for DiT), a projection to the output
// width, and (`loss`) a mean-squared-error loss against the target.
class RegressionHead : public Sequential {
 public:
  RegressionHead(std::string name, const ModelSpec& model, bool loss = true);
};

}  // namespace weft
