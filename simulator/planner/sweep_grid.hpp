#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "simulator/workload/training_scenario.hpp"

namespace weft {

// Where a multimodal plan puts its modules: one pipeline through them all (shared), or stages of
// their own per transformer module (modality parallelism, modality_stages.hpp).
enum class StageLayout : std::uint8_t { shared, modality };
// How a plan's layers are dealt to its pipeline stages: as even in layers as possible, balancing
// the stages' parameters, or balancing their compute time (ParallelPlan::Partition).
enum class StagePartition : std::uint8_t { even, parameters, time };
// Which splits of a modality plan's stages over its modules a sweep tries: the one that balances
// the stages best by the plan's partition, or every split.
enum class ModuleStageSplits : std::uint8_t { balanced, every };

inline constexpr EnumNames<StageLayout, 2> kStageLayoutNames({"shared", "modality"});
inline constexpr EnumNames<StagePartition, 3> kStagePartitionNames({"even", "parameters", "time"});
inline constexpr EnumNames<ModuleStageSplits, 2> kModuleStageSplitsNames({"balanced", "every"});

// A dp_shard axis value: as many data-parallel ranks as a node holds for the plan's tp x cp.
inline constexpr int kNodeShard = -1;

// The values a sweep tries on each axis of the parallel plan; every combination is a plan.
struct SweepGrid {
  std::vector<int> tp;
  std::vector<int> pp;
  std::vector<int> cp;
  std::vector<int> vpp;
  std::vector<std::int64_t> micro_batch;
  std::vector<RecomputeChoice> recompute;
  std::vector<int> zero;
  // Hybrid sharding's group sizes (parallel.dp_shard); 0: ZeRO over every data-parallel rank;
  // kNodeShard: the data-parallel ranks of a node.
  std::vector<int> dp_shard{0};
  std::vector<PipelineSchedule> schedule;
  std::vector<bool> sequence_parallel;                   // applied where tp > 1
  std::vector<StageLayout> layout{StageLayout::shared};  // modality only for models of several modules
  std::vector<StagePartition> partition{StagePartition::even};
  ModuleStageSplits module_stages = ModuleStageSplits::balanced;
  // Modules on meshes of their own (parallel.modules; mesh_plans.hpp): the TP and DP degrees the
  // modules before the last try on their stages under modality parallelism, beside the plan's
  // own mesh. Empty, both: not tried; one empty: the plan's tp, or the last module's dp.
  std::vector<int> module_tp{};
  std::vector<int> module_dp{};

  bool tries_meshes() const { return !module_tp.empty() || !module_dp.empty(); }
};

// Whether the cluster's GPUs run at different paces (stragglers, node groups of other types), so
// that a pipeline's stages are balanced by compute time by default.
inline bool uneven_gpus(const ClusterSpec& cluster) { return cluster.stragglers || !cluster.node_groups.empty(); }

// Every distinct plan for `gpus` GPUs of the scenario's cluster (docs/sweep.md): TP in powers of
// two up to the node size; PP every value up to the layers that divides the GPU count (uneven
// splits are balanced automatically); CP 1 and powers of two keeping at least 1,024 tokens per
// rank; VPP 1, 2, 4, 8; micro-batches 1, 2, 4, 8; recompute none and full of every layer (selective too for
// unfused attention: with flash attention it recomputes nothing and would repeat plans); ZeRO off
// and on; every schedule; sequence parallelism on and off. Layers dealt evenly (by compute time on
// clusters of uneven GPUs). A model of several modules also tries modality parallelism beside the
// shared pipeline, partitions by parameters and by time (when the training section's sample gives
// every module tokens to time), and no CP (not modelled for it).
SweepGrid default_grid(const TrainingScenario& scenario, int gpus);

// Narrows or widens axes: space-separated `axis=values`, values comma-separated, integer ranges
// `a..b` inclusive. Axes: tp, pp, cp, vpp, mb, recompute (none, selective, full, or full of some
// layers: full/firstN, full/everyK), zero, dp_shard (all, node, or shard group sizes), schedule, sp,
// layout, partition, module_stages (one value), module_tp, module_dp. Example:
// "tp=1,2,4,8 pp=1..16 mb=1,2". An axis named twice takes its last term's values. Throws
// InputError naming the axis or value at fault.
void apply_grid_spec(SweepGrid& grid, std::string_view spec);

// Throws InputError where the grid asks for what the model cannot have: modality parallelism of
// a model of one module, or module meshes without modality parallelism; or for more plans than
// half of this machine's memory holds (grid_combinations at kSweepBytesPerPlan each).
void check_grid(const SweepGrid& grid, const TrainingScenario& scenario);

// Every combination of the grid's axes' values: at least as many plans as a sweep enumerates,
// except where module_stages=every deals a plan's stages to its modules several ways.
std::int64_t grid_combinations(const SweepGrid& grid);

// Memory a sweep takes per plan it enumerates, over a plan's scenario: the peak resident memory of
// `weft sweep --grid vpp=1..N` over its plans (most of them invalid, or refused after enumeration
// by --max-minutes) was 14.0 KiB a plan on cpu-gpt-pp2 (76,992 plans), 7.4 - 11 KiB on Llama 3
// 405B and about 6 KiB on LLaVA-OV with a dataset (N = 20 - 800); rounded up. A samples file's
// samples are shared by the plans, not copied (SampleList).
inline constexpr Bytes kSweepBytesPerPlan = 16 * 1024;

// Every axis of `grid` as a spec that apply_grid_spec reads back to the same grid, values in
// their order ("tp=1,2 pp=1 ... sp=1,0 layout=shared partition=even module_stages=balanced"), and
// module_tp and module_dp where given.
std::string grid_spec(const SweepGrid& grid);

}  // namespace weft
