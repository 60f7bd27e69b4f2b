#pragma once

#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "simulator/workload/model_spec.hpp"
#include "simulator/workload/modules/attention_core.hpp"
#include "simulator/workload/modules/module.hpp"

namespace weft {

// What a network's output block ends with: the loss, or (a module feeding others) its final
// norm and output projection only.
enum class ModelHead : std::uint8_t { loss, features };

// One transformer network as the pipeline sees it: an input block (token or patch embedding),
// `layers` identical transformer layers, and an output block (final norm, head, loss).
class Model {
 public:
  // Step names start with `prefix` (a module's name and a dot in a multimodal model).
  Model(ModelSpec spec, ContextParallelAlgorithm cp_algorithm = ContextParallelAlgorithm::ring,
        ModelHead head = ModelHead::loss, std::string prefix = "");

  const ModelSpec& spec() const { return spec_; }
  int layer_count() const { return spec_.layers; }

  // Steps of one microbatch on one rank, named "input.", "L<i>." and "output." + module path
  // (after the prefix).
  std::vector<Step> input_steps(const ShardContext& context) const;
  // Every layer is the same module, so its steps are emitted once for a shard context and
  // copied, renamed, for the other layers (a module's step names all start with the prefix it is
  // given).
  std::vector<Step> layer_steps(const ShardContext& context, int layer) const;
  // `shares_embedding`: tied embeddings with the input block on the same rank, so the head's
  // weight is not counted again.
  std::vector<Step> output_steps(const ShardContext& context, bool shares_embedding) const;

  // Distinct parameters of the whole model (tied embeddings once).
  std::int64_t parameter_count() const;

 private:
  std::string layer_prefix(int layer) const;

  ModelSpec spec_;
  std::string prefix_;
  std::unique_ptr<Module> input_;
  std::unique_ptr<Module> layer_;
  std::unique_ptr<Module> output_;
  std::unique_ptr<Module> output_sharing_embedding_;
  // The layer steps emitted last: for which shard context and layer, and the steps. One is
  // enough, since a pipeline's chunks ask for one context's layers in turn (searches that ask
  // for many contexts would otherwise keep them all); guarded, since models are read from
  // several threads.
  struct EmittedLayer {
    ShardContext context;
    int layer = 0;
    std::vector<Step> steps;
  };
  mutable std::mutex last_emitted_mutex_;
  mutable std::optional<EmittedLayer> last_emitted_;
};

}  // namespace weft
