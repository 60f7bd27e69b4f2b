#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "simulator/workload/training_scenario.hpp"

namespace weft {

// The values a sweep tries on each axis of the parallel plan; every combination is a plan.
struct SweepGrid {
  std::vector<int> tp;
  std::vector<int> pp;
  std::vector<int> cp;
  std::vector<int> vpp;
  std::vector<std::int64_t> micro_batch;
  std::vector<RecomputePolicy> recompute;
  std::vector<int> zero;
  std::vector<PipelineSchedule> schedule;
  std::vector<bool> sequence_parallel;  // applied where tp > 1

  std::size_t combinations() const;
};

// Every distinct plan for `gpus` GPUs of the scenario's cluster (docs/sweep.md): TP in powers of
// two up to the node size; PP every value up to the layers that divides the GPU count (uneven
// splits are balanced automatically); CP 1 and powers of two keeping at least 1,024 tokens per
// rank; VPP 1, 2, 4, 8; micro-batches 1, 2, 4, 8; recompute none and full (selective too for
// unfused attention: with flash attention it recomputes nothing and would repeat plans); ZeRO off
// and on; every schedule; sequence parallelism on and off.
SweepGrid default_grid(const TrainingScenario& scenario, int gpus);

// Narrows or widens axes: space-separated `axis=values`, values comma-separated, integer ranges
// `a..b` inclusive. Axes: tp, pp, cp, vpp, mb, recompute, zero, schedule, sp. Example:
// "tp=1,2,4,8 pp=1..16 mb=1,2". Throws InputError naming the axis or value at fault.
void apply_grid_spec(SweepGrid& grid, std::string_view spec);

// Every axis of `grid` as a spec that apply_grid_spec reads back to the same grid, values in
// their order ("tp=1,2 pp=1 ... sp=1,0").
std::string grid_spec(const SweepGrid& grid);

}  // namespace weft
