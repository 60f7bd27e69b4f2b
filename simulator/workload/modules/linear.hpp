#pragma once

#include "simulator/workload/modules/module.hpp"

namespace weft {

// How a linear layer's weight is split over the tensor-parallel group (Megatron): a column split
// divides the outputs, a row split the inputs (its partial outputs are reduced afterwards).
enum class TpSplit : std::uint8_t { none, column, row };

// Which rows the layer multiplies: every token of the rank's microbatch, the tokens of a
// sequence-parallel shard, or one row per sample (conditioning vectors).
enum class Rows : std::uint8_t { tokens, sharded_tokens, samples };

// y = x W (+ b). Saves its input for the weight gradient. A column-split layer fed from a
// sequence-parallel region keeps only its input shard and all-gathers it again for the weight
// gradient (Korthikanti et al. §4.2.2).
class Linear : public Module {
 public:
  Linear(std::string name, std::int64_t in, std::int64_t out, bool bias, TpSplit split, Rows rows = Rows::tokens)
      : Module(std::move(name)), in_(in), out_(out), bias_(bias), split_(split), rows_(rows) {}

  // The weight is another module's (tied embeddings on one stage): no parameters of its own.
  void share_weight() { shares_weight_ = true; }

  void emit(const ShardContext& context, const std::string& prefix, std::vector<Step>& steps) const override;

 private:
  bool shares_weight_ = false;
  std::int64_t in_;
  std::int64_t out_;
  bool bias_;
  TpSplit split_;
  Rows rows_;
};

}  // namespace weft
