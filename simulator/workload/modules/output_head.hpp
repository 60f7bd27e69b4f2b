#pragma once

#include "simulator/workload/model_spec.hpp"
#include "simulator/workload/modules/module.hpp"

namespace weft {

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
