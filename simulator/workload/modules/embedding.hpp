#pragma once

#include "simulator/workload/model_spec.hpp"
#include "simulator/workload/modules/module.hpp"

namespace weft {

// Megatron's vocab-parallel token embedding: each TP rank looks up the tokens in its vocabulary
// shard, the partial results are reduced (all-reduce, or reduce-scatter into token shards with
// sequence parallelism), then learned positions are added and dropout applied. The token ids need
// no gradient; the table's gradient is a scatter-add of the output gradient.
class TokenEmbedding : public Sequential {
 public:
  TokenEmbedding(std::string name, const ModelSpec& model);
};

// A table lookup whose weight gradient scatters the output gradient back into the table.
class EmbeddingLookup : public Module {
 public:
  // `vocab_parallel`: the table's rows are split over the TP group.
  EmbeddingLookup(std::string name, std::int64_t rows, std::int64_t width, bool vocab_parallel)
      : Module(std::move(name)), rows_(rows), width_(width), vocab_parallel_(vocab_parallel) {}
  void emit(const ShardContext& context, const std::string& prefix, std::vector<Step>& steps) const override;

 private:
  std::int64_t rows_;
  std::int64_t width_;
  bool vocab_parallel_;
};

}  // namespace weft
