#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "simulator/planner/dflop/model_profiler.hpp"
#include "simulator/workload/data/sample_shape.hpp"

namespace weft::dflop {

// One component's 3D layout.
struct ModuleLayout {
  int tp = 1;
  int pp = 1;
  int dp = 1;

  int gpus() const { return tp * pp * dp; }
  auto operator<=>(const ModuleLayout&) const = default;
};

// DFLOP's parallelism strategy theta = (E_tp, E_pp, E_dp, L_tp, L_pp, L_dp, N_mb), with what the
// optimizer expects of it.
struct DflopPlan {
  ModuleLayout encoder;
  ModuleLayout llm;
  int microbatches = 0;              // N_mb: pipeline slots per iteration
  double images_per_microbatch = 0;  // t_bsz: an encoder replica's images per slot
  double tokens_per_microbatch = 0;  // t_seq: an LLM replica's packed tokens per slot
  double encoder_stage_s = 0;        // E_dur at the means
  double llm_stage_s = 0;            // L_dur at the means
  double expected_makespan_s = 0;    // T = (N_mb + E_pp + L_pp - 1) x max(E_dur, L_dur)
  Bytes encoder_memory = 0;          // Eq. 4
  Bytes llm_memory = 0;              // Eq. 5
};

// The Data Profiler's statistics (§3.2.2): the sampled dataset's shapes as the modules see them.
struct DatasetProfile {
  std::vector<SampleShape> samples;
  double mean_images = 0.0;  // per sample
  double mean_frames = 0.0;  // of them, video frames
  double mean_tokens = 0.0;  // the LLM's, per sample
};
DatasetProfile profile_dataset(std::vector<SampleShape> samples);

struct SearchSpace {
  int gpus = 0;
  std::int64_t global_batch = 0;  // samples per iteration (GBS)
  Bytes memory_capacity = 0;      // M_gpu
  // The baselines' space: one TP and one DP degree for both components, the pipeline's stages
  // split between them (Megatron-LM's and PyTorch's uniform 3D parallelism).
  bool uniform = false;
};

struct SearchResult {
  std::optional<DflopPlan> best;  // none: no strategy fits
  std::int64_t candidates = 0;    // (layout pair) candidates of phase 1
  std::int64_t evaluated = 0;     // (candidate, N_mb) pairs of phase 2
  std::int64_t fitting = 0;       // of them, within memory
};

// Algorithm 1 (papers/003 §3.3.2): every split of the GPUs between the components, every (TP, PP,
// DP) of each that uses its GPUs (TP over `profile`'s degrees, PP at most the component's layers),
// every N_mb from 1 to GBS / L_dp; memory by Eqs. 4-5 from the profiled model states and
// activations at the mean shapes; the least expected makespan. The paper's t_bsz and t_seq divide
// GBS evenly; here a bucket holds whole samples, so they are those of the fullest bucket:
// ceil(GBS / (N_mb L_dp)) samples an LLM bucket, L_dp times as many per slot over E_dp encoder
// replicas. And where the paper's E_dur and L_dur divide a component's work by its PP, here the
// costliest stage's ceil(layers / PP) layers set them. Ties keep the first found (fewer
// encoder GPUs, then smaller TP, PP, then fewer microbatches).
SearchResult find_parallelism(const ModelProfile& profile, const DatasetProfile& data, const SearchSpace& space);

// The plan's figures at `microbatches` for one layout pair (Algorithm 1's inner loop body, and
// how a plan is re-costed); none when a layout has no profile.
std::optional<DflopPlan> evaluate_plan(const ModelProfile& profile, const DatasetProfile& data,
                                       const SearchSpace& space, ModuleLayout encoder, ModuleLayout llm,
                                       int microbatches);

// Each sample's share of a slot's stage durations under `plan` (the online scheduler's
// E_dur(d; theta*) and L_dur(d; theta*), seconds): the encoder's at the plan's expected images per
// slot, scaled by L_dp / E_dp (a slot's encoder work is the L_dp buckets' samples spread over E_dp
// replicas); the LLM's linear part at the plan's packed tokens and its attention at the sample's own
// length.
struct ItemDurations {
  std::vector<double> encoder;
  std::vector<double> llm;
};
ItemDurations item_durations(const ModelProfile& profile, const DflopPlan& plan, std::span<const SampleShape> samples);

}  // namespace weft::dflop
