#pragma once

#include "simulator/workload/model_spec.hpp"
#include "simulator/workload/modules/module.hpp"

namespace weft {

// Megatron's parallel MLP: enter the TP region, fc1 (column split; gate and up together for
// SwiGLU), the activation, fc2 (row split), leave the TP region.
class Mlp : public Sequential {
 public:
  Mlp(std::string name, const ModelSpec& model);
  // From `in` to `out` features through `ffn` (a projector between two modules).
  Mlp(std::string name, std::int64_t in, std::int64_t ffn, std::int64_t out, Activation nonlinearity, bool bias);
};

}  // namespace weft
