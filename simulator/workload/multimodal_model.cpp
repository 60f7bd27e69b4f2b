#include "simulator/workload/multimodal_model.hpp"

#include <optional>

#include "simulator/workload/modules/elementwise.hpp"
#include "simulator/workload/modules/linear.hpp"
#include "simulator/workload/modules/mlp.hpp"
#include "simulator/workload/modules/norm.hpp"

namespace weft {
namespace {

int input_block(std::size_t module) { return -3 * static_cast<int>(module) - 1; }
int output_block(std::size_t module) { return -3 * static_cast<int>(module) - 2; }
int projector_block(std::size_t module) { return -3 * static_cast<int>(module) - 3; }

void clear(std::optional<OpWork>& work) {
  if (!work) return;
  work->flops = 0.0;
  work->memory_bytes = 0;
  work->network_bytes = 0;
}

// A module with no tokens in a microbatch (no images in it, say) still launches its kernels, on
// empty tensors: its steps keep their ops and parameters but do no work and keep nothing.
void make_empty(std::vector<Step>& steps) {
  for (Step& step : steps) {
    clear(step.forward);
    clear(step.backward);
    clear(step.weight_grad);
    clear(step.regather);
    step.output_bytes = step.saved_bytes = step.weight_grad_saved_bytes = step.recomputable_bytes = 0;
    step.forward_workspace_bytes = step.backward_workspace_bytes = 0;
    step.context_parallel_bytes = 0;
    step.model_flops = 0.0;
  }
}

// A projector's pooling of each video frame's tokens to its tokens_per_frame after its layers
// (LLaVA-OneVision's bilinear interpolation at stride 2, 729 SigLIP tokens to 196): one
// memory-bound pass over the frames' tokens, on the rank's shard of them under sequence
// parallelism; the images pass through. `base` shards the microbatch; `projected`, the
// projector's own context.
Step frame_pool_step(const ModuleSpec& projector, const ShardContext& base, const ShardContext& projected,
                     const SampleShape& sample) {
  const std::int64_t width = projector.output_width();
  ElementwiseShape shape;
  shape.rows = Rows::samples;
  shape.input_width = projector.tokens_per_image * width;
  shape.output_width = projector.tokens_per_frame * width;
  shape.tp_split = projected.sequence_parallel;
  ShardContext frames = projected;
  frames.micro_batch = base.micro_batch * sample.frames;
  std::vector<Step> steps;
  Elementwise(projector.name + ".frame_pool", shape).emit(frames, "", steps);
  Step& step = steps.front();
  const std::int64_t tokens = base.micro_batch * module_tokens(projector, sample);
  step.output_bytes = tokens * width / (shape.tp_split ? projected.tp : 1) * projected.element_bytes();
  return std::move(step);
}

}  // namespace

MultimodalModel::MultimodalModel(MultimodalSpec spec, ContextParallelAlgorithm cp_algorithm) : spec_(std::move(spec)) {
  const bool single = !spec_.multimodal();
  int last_transformer_layer = -1;
  for (std::size_t m = 0; m < spec_.modules.size(); ++m) {
    const ModuleSpec& module = spec_.modules[m];
    Part part;
    part.first_layer = spec_.first_layer(m);
    part.training = {module.frozen, spec_.trainable_upstream(m)};
    if (module.projector) {
      const ProjectorSpec& p = *module.projector;
      // An optional norm, then a single linear layer or LLaVA's two with GeLU between. Merging
      // tokens moves no data: the merged token is a view of its group's rows.
      auto projector = std::make_unique<Sequential>(module.name);
      if (p.norm) projector->add<Norm>("norm", p.input_width, *p.norm);
      if (p.ffn_hidden == 0) {
        projector->add<Linear>("linear", p.input_width, p.output_width, true, TpSplit::none, Rows::sharded_tokens);
      } else {
        projector->add<Mlp>("", p.input_width, p.ffn_hidden, p.output_width, Activation::gelu, true);
      }
      part.projector = std::move(projector);
      part.anchor = last_transformer_layer;
    } else {
      const ModelHead head = m + 1 == spec_.modules.size() ? ModelHead::loss : ModelHead::features;
      part.network = std::make_unique<Model>(module.model, cp_algorithm, head, single ? "" : module.name + ".");
      last_transformer_layer = part.first_layer + module.layers() - 1;
    }
    parts_.push_back(std::move(part));
  }
}

void MultimodalModel::append_steps(const ShardContext& base, const SampleShape& sample, const Layers& layers,
                                   bool head_shares_embedding, std::vector<Step>& steps,
                                   std::vector<int>& blocks) const {
  auto in_range = [&](int layer) { return layer >= layers.first && layer < layers.end; };
  for (std::size_t m = 0; m < parts_.size(); ++m) {
    const Part& part = parts_[m];
    const bool empty = module_tokens(spec_.modules[m], sample) == 0;
    // An empty module's steps are those of a minimal sample, emptied.
    const ShardContext context = module_context(spec_.modules[m], base, empty ? kOneOfEach : sample);
    // Every block after a module's first (its embedding or first projector layer, which has
    // parameters) has a step of the module upstream.
    const bool upstream = part.training.trainable_upstream;
    const bool inside = upstream || !part.training.frozen;
    auto append = [&](std::vector<Step> block_steps, int block, bool trainable_before) {
      if (empty) make_empty(block_steps);
      apply_frozen_rule(block_steps, part.training, trainable_before);
      for (Step& step : block_steps) {
        steps.push_back(std::move(step));
        blocks.push_back(block);
      }
    };
    if (part.projector) {
      if (!in_range(part.anchor)) continue;
      std::vector<Step> block_steps;
      part.projector->emit(context, "", block_steps);
      const ModuleSpec& module = spec_.modules[m];
      if (!empty && sample.frames > 0 && module.tokens_per_frame < module.tokens_per_image) {
        block_steps.push_back(frame_pool_step(module, base, context, sample));
      }
      append(std::move(block_steps), projector_block(m), upstream);
      continue;
    }
    const Model& network = *part.network;
    const int last = part.first_layer + network.layer_count() - 1;
    const bool first_module = m == 0;
    const bool last_module = m + 1 == parts_.size();
    if (first_module ? layers.first_stage : in_range(part.first_layer)) {
      append(network.input_steps(context), input_block(m), upstream);
    }
    for (int layer = std::max(layers.first, part.first_layer); layer < std::min(layers.end, last + 1); ++layer) {
      append(network.layer_steps(context, layer - part.first_layer), layer, inside);
    }
    if (last_module ? layers.last_stage : in_range(last)) {
      append(network.output_steps(context, head_shares_embedding && last_module), output_block(m), inside);
    }
  }
}

std::int64_t MultimodalModel::part_parameters(const Part& part) const {
  if (part.network) return part.network->parameter_count();
  std::vector<Step> steps;
  part.projector->emit(ShardContext{}, "", steps);
  return parameters_of(steps);
}

std::int64_t MultimodalModel::parameter_count() const {
  std::int64_t total = 0;
  for (const Part& part : parts_) total += part_parameters(part);
  return total;
}

std::int64_t MultimodalModel::trainable_parameter_count() const {
  std::int64_t total = 0;
  for (const Part& part : parts_) total += part.training.frozen ? 0 : part_parameters(part);
  return total;
}

}  // namespace weft
