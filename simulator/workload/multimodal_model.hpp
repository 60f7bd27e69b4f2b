#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "simulator/workload/frozen_rule.hpp"
#include "simulator/workload/model.hpp"
#include "simulator/workload/multimodal_spec.hpp"

namespace weft {

// A model of modality modules as one pipeline sees it: the modules' layers numbered in order
// (pipeline layers), each module's input and output blocks anchored to its first and last layer,
// and each projector to the last layer of the transformer module before it. Steps carry the
// frozen rule (frozen_rule.hpp).
class MultimodalModel {
 public:
  MultimodalModel(MultimodalSpec spec, ContextParallelAlgorithm cp_algorithm = ContextParallelAlgorithm::ring);

  const MultimodalSpec& spec() const { return spec_; }
  int layer_count() const { return spec_.layers(); }

  // The pipeline layers [first, end) of a virtual stage; the first stage holds the model's input
  // block and the last its loss even when they have no layers.
  struct Layers {
    int first = 0;
    int end = 0;
    bool first_stage = false;
    bool last_stage = false;
  };
  // Appends the steps of one microbatch on one rank for `layers` and the blocks anchored to
  // them, and each step's block: its pipeline layer, or a negative number naming a module's
  // input, output or projector block. `head_shares_embedding`: the last module's head uses the
  // embedding table on the same rank (tied embeddings, one stage).
  void append_steps(const ShardContext& base, const SampleShape& sample, const Layers& layers,
                    bool head_shares_embedding, std::vector<Step>& steps, std::vector<int>& blocks) const;

  // Distinct parameters of the whole model, and those of its trainable modules.
  std::int64_t parameter_count() const;
  std::int64_t trainable_parameter_count() const;

 private:
  struct Part {
    std::unique_ptr<Model> network;     // a transformer module
    std::unique_ptr<Module> projector;  // or a projector
    int first_layer = 0;
    int anchor = 0;  // a projector's: the pipeline layer it follows
    ModuleTraining training;
  };
  std::int64_t part_parameters(const Part& part) const;

  MultimodalSpec spec_;
  std::vector<Part> parts_;
};

}  // namespace weft
