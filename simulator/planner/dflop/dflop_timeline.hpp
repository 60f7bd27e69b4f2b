#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "simulator/planner/dflop/model_profiler.hpp"
#include "simulator/planner/dflop/parallelism_search.hpp"

namespace weft::dflop {

// Each component's layers per pipeline stage.
struct StageLayers {
  std::vector<int> encoder;
  std::vector<int> llm;
};

// The stages of `plan`: each component's layers cut into its PP stages whose costliest stage at
// the plan's mean microbatch (t_bsz images, t_seq packed tokens) costs least (papers/002 Eq. 4.1).
StageLayers plan_stage_layers(ModelCosts& costs, const DflopPlan& plan, std::int64_t pad_to);

// One iteration of `plan` on the stage model, priced with weft's per-layer costs. Bucket j is LLM
// replica j % L_dp's microbatch j / L_dp. A slot's images (its L_dp buckets') are spread over the
// E_dp encoder replicas, whole images, as evenly as they go; each LLM replica packs its bucket into
// one sequence padded to `pad_to`, its linear layers priced over the packed sequence and its
// attention over each sample's own. A stage's slot takes its slowest replica's time. The E_pp +
// L_pp stages run 1F1B over the N_mb slots, activations sent between consecutive stages (from the
// encoder to the LLM through DFLOP's inter-model communicator, §4: gathered to one rank and
// scattered again, when E_dp differs from L_dp), gradients back. Data-parallel gradient reduction
// is not counted. Returns the makespan.
TimeNs time_iteration(ModelCosts& costs, const DflopPlan& plan, const StageLayers& stages,
                      std::span<const SampleShape> samples, const std::vector<std::vector<std::size_t>>& buckets,
                      std::int64_t pad_to);

}  // namespace weft::dflop
