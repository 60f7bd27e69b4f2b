#pragma once

#include <vector>

#include "simulator/workload/training_scenario.hpp"

namespace weft {

// forward: a microbatch's forward pass through one model chunk. backward: its backward pass;
// it computes the weight gradients as it goes unless the schedule runs them separately as
// weight passes (zero-bubble schedules split B from W, papers/002 §4 and Qi et al. 2024).
enum class PassKind : std::uint8_t { forward, backward, weight };
inline constexpr int kPassKindCount = static_cast<int>(PassKind::weight) + 1;

struct PipelineAction {
  PassKind kind = PassKind::forward;
  int microbatch = 0;
  int chunk = 0;  // model chunk on this stage (0 unless interleaved)

  bool operator==(const PipelineAction&) const = default;
};

bool splits_weight_gradients(PipelineSchedule schedule);

// The order in which pipeline stage `stage` of `stages` runs its passes:
//   gpipe        every forward, then every backward
//   1f1b         stages - stage - 1 warm-up forwards, then one forward and one backward in turn
//   interleaved  Megatron's interleaved 1F1B over `chunks` model chunks per stage
//   zb-h1        1F1B with weight passes split off: stage s runs the weight pass of microbatch
//                k - s after the backward of microbatch k, so that every stage keeps at most
//                `stages` microbatches in flight (the first stage's 1F1B peak), and the
//                postponed weight passes fill the pipeline's drain
//   encoder-first  two chunks per stage, Optimus's coarse grain: every forward of chunk 0 (the
//                encoders, spread over the stages), 1F1B over chunk 1 (the backbone), then every
//                backward of chunk 0
std::vector<PipelineAction> pipeline_actions(PipelineSchedule schedule, int stage, int stages, int chunks,
                                             int microbatches);

}  // namespace weft
