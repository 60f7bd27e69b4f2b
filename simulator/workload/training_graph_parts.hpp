#pragma once

// The values the training graph builder (training_graph_builder.hpp) passes between its parts:
// a stage's peers and their streams, model chunks, what a forward pass leaves for the passes
// after it, and the keys of tensors crossing stages.

#include <array>
#include <cstdint>
#include <string_view>
#include <vector>

#include "simulator/workload/pass_template.hpp"
#include "simulator/workload/per_peer.hpp"
#include "simulator/workload/stage_graph.hpp"
#include "simulator/workload/step.hpp"
#include "simulator/workload/straggler_placement.hpp"
#include "simulator/workload/training_workload.hpp"

namespace weft::training_graph {

enum class Lane : std::uint8_t { compute, tensor_parallel, data_parallel, context_parallel, shard_replicas };
inline constexpr std::array<std::string_view, 5> kLaneNames{"compute", "tp comm", "dp comm", "cp comm",
                                                            "dp replicas comm"};

// One GPU of a pipeline stage and its streams. Forward TP and CP collectives run on the compute
// stream, synchronously as in Megatron; backward TP collectives on a TP stream, asynchronously
// (Megatron's linear layers all-gather the saved input during the input-gradient GEMM and
// reduce the input gradient during the weight-gradient GEMM); gradient and parameter
// collectives on their own stream so they overlap the backward pass; ring-attention transfers on
// another, overlapping attention. Under hybrid sharding the all-reduce of each gradient shard
// across the shard groups runs on a stream of its own, beside the next reduce-scatter, as FSDP's
// `_all_reduce_stream` runs it (torch/distributed/fsdp/_runtime_utils.py, `_reduce_grad`); the
// stream exists only then.
struct Peer {
  std::int64_t rank = 0;
  RankCoordinates coordinates;
  DeviceId device;
  StreamId compute;
  StreamId tensor_parallel;
  StreamId data_parallel;
  StreamId context_parallel;
  StreamId shard_replicas;
  std::size_t simulated_index = 0;  // into TrainingWorkload::ranks
  std::size_t index = 0;            // among its stage's peers
  PaceSetter pace;                  // the slowest GPU it stands for, and their type
};

// What an op waits for: another op's end, or one of a composite's signals.
struct Gate {
  OpId op;
  std::int32_t signal = -1;
};

// A model chunk: the steps one rank runs for one virtual pipeline stage, for microbatches of
// one length.
struct Chunk {
  int group = 0;  // virtual stage: chunk * pp + stage
  std::vector<Step> steps;
  std::vector<int> block;  // per step: the layer (or input/output block) it belongs to
  Bytes input_bytes = 0;   // activation entering the chunk; 0 for the first
  // Whether its backward pass does anything, and the virtual stages it reads that it hands a
  // gradient back to: those with backward work at or before them (frozen_rule.hpp). A chunk
  // with none of its own between such chunks relays the gradient.
  bool has_backward = true;
  bool sends_gradient = false;
  std::vector<int> gradient_inputs;
  std::vector<std::uint8_t> block_has_backward;  // per step: whether its block (layer) has backward work
  // Chunks of one shape (on any stage) do the same work and share the templates of their passes.
  std::size_t shape = 0;
  // Its replica's share of a slot's work, against an even share (ModuleShard::work_share).
  double work_share = 1.0;
};

// With passes as composites, what one pass leaves for another travels in a bundle: these are
// the routes, and a member is named by what it is and the step it belongs to.
enum class Route : std::uint32_t {
  forward_to_backward,
  forward_to_recompute,
  forward_to_weight,
  recompute_to_backward,
  recompute_to_weight,
  backward_to_weight,
};
inline constexpr std::size_t kRouteCount = 6;
// The bundle tensors of one microbatch's passes of a chunk, by route (empty: no such bundle).
using BundleSet = std::array<PerPeer<TensorId>, kRouteCount>;

enum class Kept : std::uint32_t { saved, checkpoint, recomputed, output_grad };
constexpr std::uint32_t member_key(Kept what, std::size_t step) {
  return static_cast<std::uint32_t>(step) * 4 + static_cast<std::uint32_t>(what);
}

// What a chunk's forward pass of one microbatch left for its backward and weight passes.
struct ForwardRecord {
  std::vector<PerPeer<TensorId>> saved;       // per step (empty: nothing saved)
  std::vector<PerPeer<TensorId>> checkpoint;  // per step: layer input kept by full recompute
  PerPeer<TensorId> output;                   // the loss, on the last chunk
  BundleSet bundles;                          // with passes as composites, instead of the above
  PerPeer<TensorId> output_grad;              // with passes as composites: the backward's incoming gradient
  PerPeer<TensorId> sent_gradient;            // and its outgoing one, where a weight gradient reads it too
};

// A weight-gradient op waiting for its weight pass (zero-bubble schedules).
struct PendingWeightGrad {
  std::size_t step = 0;
  PerPeer<TensorId> output_grad;
  PerPeer<TensorId> input;
  // With passes as composites: its output gradient is the one the backward pass hands to the
  // chunk before (a step without an input-gradient op passes it through).
  bool reads_sent_gradient = false;
};

struct BoundaryKey {
  int group = 0;  // the sending side of a forward boundary, the receiving side of a backward one
  int microbatch = 0;
  bool backward = false;
};

}  // namespace weft::training_graph
