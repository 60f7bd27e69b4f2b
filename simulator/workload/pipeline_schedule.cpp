#include "simulator/workload/pipeline_schedule.hpp"

#include <algorithm>

namespace weft {
namespace {

std::vector<PipelineAction> gpipe(int microbatches) {
  std::vector<PipelineAction> actions;
  for (int mb = 0; mb < microbatches; ++mb) actions.push_back({PassKind::forward, mb, 0});
  for (int mb = 0; mb < microbatches; ++mb) actions.push_back({PassKind::backward, mb, 0});
  return actions;
}

std::vector<PipelineAction> one_f_one_b(int stage, int stages, int microbatches) {
  const int warmup = std::min(stages - stage - 1, microbatches);
  std::vector<PipelineAction> actions;
  for (int mb = 0; mb < warmup; ++mb) actions.push_back({PassKind::forward, mb, 0});
  for (int k = 0; k < microbatches - warmup; ++k) {
    actions.push_back({PassKind::forward, warmup + k, 0});
    actions.push_back({PassKind::backward, k, 0});
  }
  for (int mb = microbatches - warmup; mb < microbatches; ++mb) actions.push_back({PassKind::backward, mb, 0});
  return actions;
}

std::vector<PipelineAction> zb_h1(int stage, int stages, int microbatches) {
  std::vector<PipelineAction> actions;
  int next_weight = 0;
  for (const PipelineAction& action : one_f_one_b(stage, stages, microbatches)) {
    actions.push_back(action);
    if (action.kind == PassKind::backward && action.microbatch - stage >= 0) {
      actions.push_back({PassKind::weight, next_weight++, 0});
    }
  }
  while (next_weight < microbatches) actions.push_back({PassKind::weight, next_weight++, 0});
  return actions;
}

// Megatron-LM's forward_backward_pipelining_with_interleaving: the k-th virtual microbatch of a
// stage is microbatch (k / (p v)) p + k % p of chunk (k % (p v)) / p (reversed for backward).
std::vector<PipelineAction> interleaved(int stage, int stages, int chunks, int microbatches) {
  const int total = microbatches * chunks;
  const int group = stages * chunks;
  const int warmup = std::min((stages - stage - 1) * 2 + (chunks - 1) * stages, total);
  auto virtual_action = [&](PassKind kind, int k) {
    const int chunk = (k % group) / stages;
    return PipelineAction{kind, (k / group) * stages + k % stages,
                          kind == PassKind::forward ? chunk : chunks - 1 - chunk};
  };
  std::vector<PipelineAction> actions;
  for (int k = 0; k < warmup; ++k) actions.push_back(virtual_action(PassKind::forward, k));
  for (int k = 0; k < total - warmup; ++k) {
    actions.push_back(virtual_action(PassKind::forward, warmup + k));
    actions.push_back(virtual_action(PassKind::backward, k));
  }
  for (int k = total - warmup; k < total; ++k) actions.push_back(virtual_action(PassKind::backward, k));
  return actions;
}

// Optimus-style coarse grain over two chunks: every chunk-0 (encoder) forward, 1F1B over chunk 1
// (the backbone), then every chunk-0 backward.
std::vector<PipelineAction> encoder_first(int stage, int stages, int microbatches) {
  std::vector<PipelineAction> actions;
  for (int mb = 0; mb < microbatches; ++mb) actions.push_back({PassKind::forward, mb, 0});
  for (PipelineAction action : one_f_one_b(stage, stages, microbatches)) {
    action.chunk = 1;
    actions.push_back(action);
  }
  for (int mb = 0; mb < microbatches; ++mb) actions.push_back({PassKind::backward, mb, 0});
  return actions;
}

}  // namespace

bool splits_weight_gradients(PipelineSchedule schedule) { return schedule == PipelineSchedule::zb_h1; }

std::vector<PipelineAction> pipeline_actions(PipelineSchedule schedule, int stage, int stages, int chunks,
                                             int microbatches) {
  switch (schedule) {
    case PipelineSchedule::gpipe:
      return gpipe(microbatches);
    case PipelineSchedule::one_f_one_b:
      return one_f_one_b(stage, stages, microbatches);
    case PipelineSchedule::interleaved:
      return interleaved(stage, stages, chunks, microbatches);
    case PipelineSchedule::zb_h1:
      return zb_h1(stage, stages, microbatches);
    case PipelineSchedule::encoder_first:
      return encoder_first(stage, stages, microbatches);
  }
  return {};
}

}  // namespace weft
