#pragma once

#include "simulator/workload/model_spec.hpp"
#include "simulator/workload/modules/module.hpp"

namespace weft {

// RMSNorm or LayerNorm over the hidden width, on the rank's sequence-parallel shard of tokens.
// Memory-bound: the forward reads and writes the activations once; the backward reads the
// input and the output gradient and writes the input gradient (weight gradients fused in).
class Norm : public Module {
 public:
  Norm(std::string name, std::int64_t width, NormKind kind) : Module(std::move(name)), width_(width), kind_(kind) {}

  void emit(const ShardContext& context, const std::string& prefix, std::vector<Step>& steps) const override;

 private:
  std::int64_t width_;
  NormKind kind_;
};

// A norm's forward op (reads and writes `rows` x `width` activations) or backward op (reads the
// input and the output gradient, writes the input gradient), each its own kernel.
OpWork norm_work(NormKind kind, bool backward, std::int64_t rows, std::int64_t width, Dtype dtype);

}  // namespace weft
