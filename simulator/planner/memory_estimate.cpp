#include "simulator/planner/memory_estimate.hpp"

#include <algorithm>
#include <numeric>

#include "simulator/workload/model.hpp"
#include "simulator/workload/multimodal_model.hpp"
#include "simulator/workload/training_workload.hpp"

namespace weft {
namespace {

struct Footprint {
  std::int64_t parameters = 0;
  Bytes saved = 0;          // activations kept for the backward pass, per microbatch
  Bytes op_checkpoint = 0;  // what per-op checkpointing keeps instead, besides the layer's input
};

Footprint footprint(const std::vector<Step>& steps, const TrainingScenario& s) {
  Footprint out;
  for (const Step& step : steps) {
    out.parameters += step.parameters;
    out.saved += step.saved_bytes - (s.recomputes_attention_core() ? step.recomputable_bytes : 0);
    out.op_checkpoint += step.op_checkpoint_bytes;
  }
  return out;
}

// Parameters, gradients and optimizer states of `trainable` and `frozen` parameters held on a
// rank (frozen ones have neither gradients nor optimizer states), and the framework's overhead.
Bytes fixed_memory(const TrainingScenario& s, std::int64_t trainable, std::int64_t frozen, int position) {
  return rank_static_memory(s, trainable + frozen, trainable, position).total();
}

// A model of several modules, or samples drawn per microbatch: each virtual stage's own steps. A
// stage's first backward pass (its last chunk's, of the first microbatch) comes after the
// microbatch's forward through all its chunks, whose activations it still holds (every
// microbatch's under GPipe); under full recompute only those of the blocks anchored to its layers
// count; with drawn samples, whose shapes the estimate does not know, none.
std::vector<Bytes> estimate_stage_memory_by_steps(const TrainingScenario& s, const PipelineLayerSteps* known) {
  const ParallelPlan& p = s.parallel;
  const std::vector<int> layers = s.layers_per_virtual_stage();
  std::vector<std::int64_t> trainable(static_cast<std::size_t>(p.pp), 0);
  std::vector<std::int64_t> frozen(static_cast<std::size_t>(p.pp), 0);
  std::vector<Bytes> saved(static_cast<std::size_t>(p.pp), 0);
  const std::vector<std::uint8_t> recomputed = s.recomputed_layers();
  auto add = [&](std::size_t stage, const std::vector<Step>& steps, const std::vector<int>& blocks) {
    for (std::size_t i = 0; i < steps.size(); ++i) {
      const Step& step = steps[i];
      (step.trainable ? trainable : frozen)[stage] += step.parameters;
      if (s.data) continue;
      if (blocks[i] >= 0 && recomputed[static_cast<std::size_t>(blocks[i])] != 0) {
        // A frozen module that passes no gradient back keeps nothing (training_passes.cpp).
        const bool backward = step.backward || step.weight_grad;
        if (s.per_op_checkpointing() && backward) saved[stage] += step.op_checkpoint_bytes;
        continue;
      }
      saved[stage] += step.saved_bytes - (s.recomputes_attention_core() ? step.recomputable_bytes : 0);
    }
  };
  // Tied embeddings counted as shared wherever they are: fewer parameters, still a lower bound.
  const bool shared_head = s.model.tied_embeddings();
  if (known == nullptr || std::find(layers.begin(), layers.end(), 0) != layers.end()) {
    const MultimodalModel model(s.model, p.cp_algorithm);
    const ShardContext context = s.shard_context();
    std::vector<Step> steps;
    std::vector<int> blocks;
    int first = 0;
    for (std::size_t group = 0; group < layers.size(); ++group) {
      steps.clear();
      blocks.clear();
      model.append_steps(context, s.training.sample(),
                         {first, first + layers[group], group == 0, group + 1 == layers.size()}, shared_head, steps,
                         blocks);
      first += layers[group];
      add(group % static_cast<std::size_t>(p.pp), steps, blocks);
    }
  } else {
    std::size_t layer = 0;
    for (std::size_t group = 0; group < layers.size(); ++group) {
      for (int i = 0; i < layers[group]; ++i, ++layer) {
        add(group % static_cast<std::size_t>(p.pp), known->steps[layer], known->blocks[layer]);
      }
    }
  }
  const std::int64_t in_flight = p.schedule == PipelineSchedule::gpipe ? s.microbatches() : 1;
  std::vector<Bytes> estimates;
  for (std::size_t stage = 0; stage < saved.size(); ++stage) {
    estimates.push_back(fixed_memory(s, trainable[stage], frozen[stage], static_cast<int>(stage)) +
                        saved[stage] * in_flight);
  }
  return estimates;
}

}  // namespace

std::vector<Bytes> estimate_stage_memory(const TrainingScenario& s, const PipelineLayerSteps* layer_steps) {
  if (s.model.multimodal() || s.data) return estimate_stage_memory_by_steps(s, layer_steps);
  const ParallelPlan& p = s.parallel;
  const ShardContext context = s.shard_context();
  const ModelSpec& spec = s.model.single();
  const Model model(spec, p.cp_algorithm);
  const Footprint layer = footprint(model.layer_steps(context, 0), s);
  const Footprint input = footprint(model.input_steps(context), s);
  const Footprint output = footprint(model.output_steps(context, spec.tied_embeddings && p.pp == 1), s);
  // A recomputed layer keeps only its input until its backward; under per-op checkpointing also
  // the outputs it keeps. The others keep every activation.
  const Bytes checkpointed_saved = context.sharded_tokens() * spec.hidden * context.element_bytes() +
                                   (s.per_op_checkpointing() ? layer.op_checkpoint : 0);
  const std::vector<std::uint8_t> recomputed = s.recomputed_layers();
  const std::vector<int> layers = s.layers_per_virtual_stage();
  std::vector<std::int64_t> first_layer(layers.size(), 0);  // of each virtual stage
  std::partial_sum(layers.begin(), layers.end() - 1, first_layer.begin() + 1);
  const LayerRecompute& pick = p.recompute_layers;
  auto group_saved = [&](std::size_t group) {
    const auto begin = recomputed.begin() + first_layer[group];
    const std::int64_t checkpointed = std::count(begin, begin + layers[group], std::uint8_t{1});
    // Megatron's uniform groups keep one input a group of the chunk's layers.
    const std::int64_t checkpoints =
        pick.method == LayerRecompute::Method::uniform ? (layers[group] + pick.count - 1) / pick.count : checkpointed;
    return checkpoints * checkpointed_saved + (layers[group] - checkpointed) * layer.saved;
  };
  const int groups = static_cast<int>(layers.size());
  const std::int64_t microbatches = s.microbatches();

  std::vector<Bytes> estimates;
  for (int stage = 0; stage < p.pp; ++stage) {
    std::int64_t parameters = 0;
    Bytes all_chunks = 0;
    std::vector<Bytes> chunk_saved;
    for (int chunk = 0; chunk < p.vpp; ++chunk) {
      const int group = chunk * p.pp + stage;
      Bytes saved = group_saved(static_cast<std::size_t>(group));
      parameters += layers[static_cast<std::size_t>(group)] * layer.parameters;
      if (group == 0) saved += input.saved, parameters += input.parameters;
      if (group == groups - 1) saved += output.saved, parameters += output.parameters;
      chunk_saved.push_back(saved);
      all_chunks += saved;
    }
    Bytes activations = 0;
    switch (p.schedule) {
      case PipelineSchedule::gpipe:
        activations = microbatches * all_chunks;
        break;
      case PipelineSchedule::one_f_one_b:
      case PipelineSchedule::zb_h1:
        activations = std::min<std::int64_t>(microbatches, p.pp - stage) * all_chunks;
        break;
      case PipelineSchedule::interleaved: {
        const std::int64_t warmup =
            std::min<std::int64_t>((p.pp - stage - 1) * 2 + (p.vpp - 1) * p.pp, microbatches * p.vpp);
        activations = std::min<std::int64_t>(warmup + 1, microbatches * p.vpp) *
                      *std::min_element(chunk_saved.begin(), chunk_saved.end());
        break;
      }
      case PipelineSchedule::encoder_first:  // every microbatch's chunk 0, then 1F1B over chunk 1
        activations = microbatches * chunk_saved.front() +
                      std::min<std::int64_t>(microbatches, p.pp - stage) * chunk_saved.back();
        break;
    }
    estimates.push_back(fixed_memory(s, parameters, 0, static_cast<int>(stage)) + activations);
  }
  return estimates;
}

}  // namespace weft
