#pragma once

#include <string>

#include "simulator/planner/dflop/parallelism_search.hpp"
#include "tests/simulator/planner/dip/dip_test_support.hpp"

namespace weft::test {

// The planner tests' small VLM (dip_test_support.hpp) on 8 GPUs as TP2, each module a stage of its
// own, two replicas, 16 samples an iteration drawn from the tiled image dataset.
inline std::string small_dflop_scenario() {
  return with_two_replicas(small_vlm_scenario(R"({"dataset": "tiled-image-qa", "seed": 3, "pad_to": 128})",
                                              R"(, "modality_stages": {"vision": 1, "language": 1})"));
}

// A DFLOP plan of the two layouts and N_mb, without the optimizer's expectations.
inline dflop::DflopPlan plan_of(dflop::ModuleLayout encoder, dflop::ModuleLayout llm, int microbatches) {
  dflop::DflopPlan plan;
  plan.encoder = encoder;
  plan.llm = llm;
  plan.microbatches = microbatches;
  return plan;
}

}  // namespace weft::test
