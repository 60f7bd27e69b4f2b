#pragma once

#include <vector>

#include "simulator/workload/training_graph_builder.hpp"

namespace weft::training_graph {

// ZeRO-3 (FSDP's full sharding) in one pass of one chunk: each layer's parameter all-gather, the
// next layer's issued as a layer starts (one layer ahead), and in the backward each layer's
// gradient reduce-scatter once its gradients are made. enter(k) before step k's ops sets the
// builder's layer_parameters_, which those ops read; note(k, ops) after them; finish() at the
// end of the pass. Without `prefetch` only the layers entered are gathered (a pass that
// recomputes one layer). Each layer's compute runs beside the collectives issued as it starts (the
// next layer's gather, the previous layer's reduce-scatter): the builder's collective_sms_share_.
// Below ZeRO-3, or with one data-parallel shard, it does nothing.
class ShardedLayers {
 public:
  ShardedLayers(TrainingGraphBuilder& builder, int stage, const Chunk& chunk, bool backward, int mb,
                bool prefetch = true);
  ShardedLayers(const ShardedLayers&) = delete;
  ShardedLayers& operator=(const ShardedLayers&) = delete;
  ~ShardedLayers();

  void enter(std::size_t step);
  // The step's ops in this pass read the gathered parameters; `gradient`: they make gradients.
  void note(std::size_t step, const PerPeer<OpId>& ops, bool gradient);
  void finish();

 private:
  // A run of steps of one block (a layer, or the input or output block) that holds parameters.
  struct Unit {
    std::size_t first = 0;
    std::size_t last = 0;
    std::int64_t parameters = 0;  // gathered: its own and any it reads from another unit
    std::int64_t trained = 0;     // reduced: its own trainable ones
  };
  struct State {
    bool issued = false;
    PerPeer<TensorId> gathered;
    PerPeer<OpId> last_ops;
    std::vector<PerPeer<OpId>> gradient_ops;
  };

  // Returns the gather's time.
  TimeNs gather(std::size_t unit, const PerPeer<OpId>& after);
  void finish_unit();

  TrainingGraphBuilder& b_;
  int stage_;
  const Chunk& chunk_;
  bool backward_;
  int mb_;
  bool prefetch_;
  std::vector<int> unit_of_step_;  // the step's unit in pass order; -1: none
  std::vector<Unit> units_;        // in pass order
  std::vector<State> state_;
  std::vector<TimeNs> unit_compute_;  // the time alone of each unit's compute in this pass
  TimeNs beside_ = 0;                 // of the collectives issued since the last unit began
  double outer_share_ = 0.0;          // the builder's share outside the layers
  int current_ = -1;
};

}  // namespace weft::training_graph
