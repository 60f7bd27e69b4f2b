#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "cost_models/parallel_dims.hpp"
#include "simulator/core/json_cursor.hpp"
#include "simulator/core/units.hpp"
#include "simulator/workload/data/data_spec.hpp"
#include "simulator/workload/data/sample_shape.hpp"
#include "simulator/workload/step.hpp"

namespace weft {

struct MultimodalSpec;
struct TrainingScenario;

// Per-module meshes: DFLOP's heterogeneous 3D parallelism (papers/003 §4: "the available GPUs are
// partitioned into distinct process groups for each module") and Cornstarch's per-module
// ParallelSpec (papers/004 §3). With `parallel.modality_stages`, `parallel.modules` gives a
// module before the last its own TP and DP ({"vision": {"tp": 1, "dp": 8}}); the last module (the
// one with the loss) has the plan's tp and dp, and so has a module not named. Each stage of a
// module holds tp x cp x dp GPUs of its own, module after module in the pipeline's order.
//
// Every module runs the same microbatch slots: global_batch / (dp x micro_batch) of them, each
// the micro_batch samples of every one of the last module's dp replicas. A module of E_dp
// replicas splits a slot's micro_batch x dp samples over them, evenly where they divide; an
// image encoder otherwise deals the slot's images, whole, as evenly as they go (DFLOP's stage
// model, dflop_timeline.cpp), and the simulated replica is one of the busiest. On per-sample data
// every replica is simulated with its own share (module_replica_shapes; only an image encoder's
// DP may differ from the last module's there). Where E_dp is not the reader's DP, DFLOP's
// inter-model communicator gathers a slot's activations from every encoder replica on one rank
// and scatters them to the reader's replicas, and the gradients back: the slot's whole activation
// crosses that rank twice each way (relay_bytes).

// Reads `parallel`'s "modules" into scenario.parallel.module_meshes (after modality_stages).
// Errors name the key: no modality stages, no explicit dp, an unknown module, a projector, the
// last module, a degree below one, an unknown field.
void read_module_meshes(const JsonCursor& parallel, TrainingScenario& scenario);

// A projector runs on the mesh of the module it reads: gives each projector of `model` that
// module's entry of `meshes` (one per module).
void give_projectors_their_readers_meshes(const MultimodalSpec& model, std::vector<PositionMesh>& meshes);

// Checks what this version simulates with meshes of their own (InvalidPlan naming the field):
// healthy GPUs of one type, ZeRO below 3, no hybrid sharding; a slot that splits over each
// module's replicas. The simulation itself takes uniform data only, folded (the training graph
// builder refuses the rest); weft dflop times such a layout on per-sample data.
void validate_module_meshes(const TrainingScenario& s);

// Checks what the full simulation takes of a valid scenario with meshes (InvalidPlan naming the
// field): on per-sample data, a module at another DP than the last module's is an image encoder.
void check_simulated_meshes(const TrainingScenario& s);

// What microbatch slot `k` of `shapes` holds together: microbatch k of every replica (their
// sequence tokens, images, frames and seconds of video and audio summed).
SampleShape slot_of(const MicrobatchShapes& shapes, int k);

// On per-sample data, what each of the `dp` replicas of an image encoder takes of each microbatch
// slot (microbatch k of every one of the last module's replicas in `shapes`): the slot's images,
// whole, as evenly as they go, the first replicas taking one more (as DFLOP's stage model deals
// them, dflop_timeline.cpp), and its video frames among them alike. Each share is one microbatch of `images` images and
// a sequence of `pad_to` tokens (which an image encoder does not read).
MicrobatchShapes module_replica_shapes(const MicrobatchShapes& shapes, int dp, std::int64_t pad_to);

// Each module's GPUs: "vision 1 stage x tp 1 x dp 8 = 8 GPUs; language 3 stages x tp 2 x dp 4 = 24 GPUs".
std::string describe_module_meshes(const TrainingScenario& s);

// How one rank of `module` shards its part of a microbatch slot: the TP of its mesh, and the
// samples (or, for an image encoder whose DP does not divide the slot, the images) of its
// replica's share. On per-sample data `sample` is the replica's own share already. `work_share`: the slot's work over
// (this replica's work x the module's DP), 1 where the slot divides evenly (model FLOPs count the slot's work, not the
// busiest share's).
struct ModuleShard {
  ShardContext context;
  SampleShape sample;
  double work_share = 1.0;
};
ModuleShard module_shard(const TrainingScenario& s, std::size_t module, const ShardContext& base,
                         const SampleShape& sample);

// The module whose stages hold pipeline position `position` (under modality_stages).
std::size_t module_at(const TrainingScenario& s, int position);

// The bytes DFLOP's communicator moves through its rank for one slot when pipeline position
// `from` (the last stage of an encoder) hands its output to `to` on replicas of another DP: the
// slot's whole output, gathered then scattered; 0 where both have one DP (replica to replica).
// `slot`: what the slot's samples hold together (on per-sample data); absent, micro_batch x dp
// samples of the training section's.
Bytes relay_bytes(const TrainingScenario& s, int from, int to, const std::optional<SampleShape>& slot = std::nullopt);

}  // namespace weft
