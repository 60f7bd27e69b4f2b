#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "simulator/planner/dip/layer_costs.hpp"
#include "simulator/planner/dip/stage_interleaving.hpp"
#include "simulator/planner/entrain/pairwise_deferral.hpp"

namespace weft::entrain {

// A vision-language pipeline as Entrain lays it out (papers/002 §4.4.3): the encoder component's
// stages on the first ranks, then the LLM's, one stage per rank; per stage its layer count.
struct ComponentPipeline {
  std::vector<int> encoder_stages;
  std::vector<int> llm_stages;

  int ranks() const { return static_cast<int>(encoder_stages.size() + llm_stages.size()); }
};

// How a replica's microbatches run.
struct PipelineRun {
  // The encoder's backward pass of a microbatch runs in parts, each once the gradients of its own
  // samples are back (§4.5.3, split-backward processing); otherwise it waits for all of them.
  bool split_backward = false;
  // Each rank runs as many forward passes before its first backward one as its activation memory
  // allows (§4.5.3, eager forward execution); otherwise 1F1B's warm-up, stages - position.
  bool eager_forward = false;
  std::vector<Bytes> activation_limit;  // per rank, for eager forward
};

// One DP replica's pipeline, timed on the stage model.
struct ReplicaTimeline {
  std::vector<dip::PipelineStage> stages;
  dip::StageSchedule schedule;
  std::vector<double> encoder_forward;  // per microbatch position: seconds over the encoder's stages
  std::vector<double> llm_forward;      // and over the LLM's
};

// The stage model of one replica's iteration: microbatch position m runs `encoder[m]`'s samples
// through the encoder's stages and `llm[m]`'s through the LLM's (a deferred sample's LLM work runs
// one position after its encoder work). A stage of a set of samples costs what one packed sequence of
// them costs (tokens summed and padded to `pad_to`, images summed) on `costs`, under `policy`;
// transfers between ranks as the DIP stage model prices them. Each rank runs 1F1B over its
// microbatch slots in position order; the LLM's first stage waits for the encoder's last stage on
// every sample it reads, and the encoder's backward pass for the LLM's gradients of its samples.
ReplicaTimeline time_replica(dip::LayerCosts& costs, dip::LayerPolicy policy, std::span<const SampleShape> samples,
                             const ComponentPipeline& pipeline, std::span<const SampleSet> encoder,
                             std::span<const SampleSet> llm, std::int64_t pad_to, const PipelineRun& run);

// The packed shape of `set`'s samples: tokens summed and padded to `pad_to`, images summed.
SampleShape packed_shape(std::span<const SampleShape> samples, const SampleSet& set, std::int64_t pad_to);

}  // namespace weft::entrain
