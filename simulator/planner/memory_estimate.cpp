#include "simulator/planner/memory_estimate.hpp"

#include <algorithm>
#include <numeric>

#include "simulator/workload/model.hpp"

namespace weft {
namespace {

struct Footprint {
  std::int64_t parameters = 0;
  Bytes saved = 0;  // activations kept for the backward pass, per microbatch
};

Footprint footprint(const std::vector<Step>& steps, RecomputePolicy recompute) {
  Footprint out;
  for (const Step& step : steps) {
    out.parameters += step.parameters;
    out.saved += step.saved_bytes - (recompute == RecomputePolicy::selective ? step.recomputable_bytes : 0);
  }
  return out;
}

}  // namespace

std::vector<Bytes> estimate_stage_memory(const TrainingScenario& s) {
  const ParallelPlan& p = s.parallel;
  const ShardContext context = s.shard_context();
  // Sweeps take models of one module (load_sweep_scenario).
  const ModelSpec& spec = s.model.single();
  const Model model(spec, p.cp_algorithm);
  const Footprint layer = footprint(model.layer_steps(context, 0), p.recompute);
  const Footprint input = footprint(model.input_steps(context), p.recompute);
  const Footprint output = footprint(model.output_steps(context, spec.tied_embeddings && p.pp == 1), p.recompute);
  // Under full recompute a layer keeps only its input until its backward.
  const Bytes layer_saved = p.recompute == RecomputePolicy::full
                                ? context.sharded_tokens() * spec.hidden * context.element_bytes()
                                : layer.saved;
  const std::vector<int> layers = s.layers_per_virtual_stage();
  const int groups = static_cast<int>(layers.size());
  const std::int64_t microbatches = s.microbatches();
  const std::int64_t shards = p.zero >= 1 ? std::int64_t{p.dp} * p.cp : 1;
  const std::int64_t gradient_shards = p.zero >= 2 ? shards : 1;

  std::vector<Bytes> estimates;
  for (int stage = 0; stage < p.pp; ++stage) {
    std::int64_t parameters = 0;
    Bytes all_chunks = 0;
    std::vector<Bytes> chunk_saved;
    for (int chunk = 0; chunk < p.vpp; ++chunk) {
      const int group = chunk * p.pp + stage;
      Bytes saved = layers[static_cast<std::size_t>(group)] * layer_saved;
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
    const Bytes fixed = s.stack.parameter_bytes(s.training.dtype) * parameters / (p.zero >= 3 ? shards : 1) +
                        s.stack.gradient_memory_bytes(s.training.dtype) * parameters / gradient_shards +
                        s.stack.optimizer_state_bytes(s.training.dtype) * parameters / shards +
                        s.options.framework_overhead;
    estimates.push_back(fixed + activations);
  }
  return estimates;
}

}  // namespace weft
