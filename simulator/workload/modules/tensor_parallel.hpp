#pragma once

#include "simulator/workload/modules/module.hpp"

namespace weft {

// Entering a tensor-parallel region, before a column-split linear (Megatron's f): with sequence
// parallelism an all-gather of the token shards, whose backward is a reduce-scatter; without,
// the identity, whose backward all-reduces the input gradient. Nothing when TP is 1.
class TensorParallelEnter : public Module {
 public:
  TensorParallelEnter(std::string name, std::int64_t width) : Module(std::move(name)), width_(width) {}
  void emit(const ShardContext& context, const std::string& prefix, std::vector<Step>& steps) const override;

 private:
  std::int64_t width_;
};

// Leaving it, after a row-split linear (Megatron's g): a reduce-scatter of the partial sums into
// token shards (all-gather in backward), or an all-reduce (identity in backward).
class TensorParallelExit : public Module {
 public:
  TensorParallelExit(std::string name, std::int64_t width) : Module(std::move(name)), width_(width) {}
  void emit(const ShardContext& context, const std::string& prefix, std::vector<Step>& steps) const override;

 private:
  std::int64_t width_;
};

}  // namespace weft
