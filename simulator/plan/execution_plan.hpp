#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cost_models/comm_group.hpp"
#include "cost_models/parallel_dims.hpp"
#include "simulator/core/json_cursor.hpp"
#include "simulator/core/op_work.hpp"

namespace weft {

// What a rank does, in order (PipeWeaver's execution plans, papers/001 Table 2, plus the
// passes zero-bubble and recomputing schedules add): a pipeline pass of a model chunk for a
// microbatch with its ops, ops outside passes (the optimizer step), a collective outside passes
// (gradient reduction), and point-to-point transfers between pipeline stages, launched and
// waited for separately.
enum class ActionKind : std::uint8_t {
  forward_stage,
  backward_stage,
  weight_stage,
  recompute_stage,
  compute,
  collective,
  isend,
  wait_isend,
  irecv,
  wait_irecv,
};

inline constexpr EnumNames<ActionKind, 10> kActionKindNames({"forward_stage", "backward_stage", "weight_stage",
                                                             "recompute_stage", "compute", "collective", "isend",
                                                             "wait_isend", "irecv", "wait_irecv"});

// One op: what it computes (OpWork without a communicator id) and how it is issued. Ops off the
// compute stream are asynchronous: issued without waiting for their end. An op starts only after
// the asynchronous ops listed in `after` (ids of earlier ops of the program) have completed.
struct PlanOp {
  std::uint32_t id = 0;  // the op's index in its program, in issue order
  std::string name;
  OpWork work;
  std::string stream = "compute";
  bool async = false;
  std::string group;  // communication ops: the communicator, "tp", "dp", "cp" or "embedding"
  std::vector<std::uint32_t> after;
};

struct PlanAction {
  ActionKind kind = ActionKind::compute;
  int chunk = -1;           // stages: the model chunk on this rank
  int microbatch = -1;      // stages
  std::vector<PlanOp> ops;  // stages and compute: in issue order; collective: exactly one
  // Point-to-point: the transfer (a launch and its wait share the id), the pipeline stage of the
  // peer (the rank there with this rank's other coordinates), the MPI tag matching the two
  // sides, and the bytes.
  std::uint32_t transfer = 0;
  int peer_stage = -1;
  std::int64_t tag = 0;
  std::int64_t bytes = 0;
  std::string name;
  // A relay through DFLOP's communicator on per-sample data (plan_relays): the slot's bytes on
  // each replica of the sending mesh (what it gives the communicator) and of the receiving mesh
  // (what each of its ranks takes), by dp. Empty: the slot is dealt evenly over the replicas.
  std::vector<std::int64_t> relay_shares;
  std::vector<std::int64_t> relay_parts;
};

// The actions of every rank that plays one role (one pipeline stage when the simulation folded
// the TP, CP and DP peers into one).
struct PlanProgram {
  std::string label;
  int stage = 0;
  std::vector<PlanAction> actions;
};

struct ExecutionPlan {
  std::string description;
  ParallelDims dims;
  std::int64_t simulated_iteration_ns = 0;
  // The stage holding the input embedding table that the last stage's head shares (tied
  // embeddings): the embedding communicator joins it and the last stage. 0 but in a model of
  // several modules, where the language model's first layer may sit on a later stage.
  int embedding_stage = 0;
  std::vector<PlanProgram> programs;
  std::vector<int> program_of_rank;  // per rank

  std::int64_t world_size() const { return static_cast<std::int64_t>(program_of_rank.size()); }
};

// The ranks of `kind`'s communicator that rank `c` belongs to, as the simulator groups them:
// tp varies the tp coordinate; cp the cp coordinate; dp the dp and cp coordinates (gradients are
// reduced over both); embedding joins the plan's embedding stage and the last stage (tied
// embeddings).
std::vector<int> plan_group_members(const ExecutionPlan& plan, const RankCoordinates& c, CommGroupKind kind);

// The ranks at the other end of a transfer that the rank at `c` launches to (`sends`) or from
// `peer_stage`, a stage of the same DP: the rank there with c's other coordinates. Between
// stages whose meshes differ in TP (modules on meshes of their own), a receiver at tp j takes its
// copy from the sender at tp j mod the sender's TP: a sender of fewer TP ranks than its receiver
// sends to several, one of more sends to none past the receiver's TP.
std::vector<int> plan_transfer_peers(const ExecutionPlan& plan, const RankCoordinates& c, int peer_stage, bool sends);

// Whether a transfer between `stage` and `peer_stage` goes through DFLOP's inter-model
// communicator (papers/003 §4, Fig. 6): their meshes differ in DP. Such a transfer's bytes are
// what crosses the communicator rank, the microbatch slot's output (or its gradient) gathered and
// then scattered: twice the slot's.
bool plan_relays(const ParallelDims& dims, int stage, int peer_stage);

// One message of a transfer as one rank exchanges it. A relay's second phase (the communicator
// handing on what it gathered) starts once the first phase has completed on that rank.
struct TransferMessage {
  int peer = 0;
  std::int64_t bytes = 0;
  bool sends = false;
  bool second_phase = false;
  auto operator<=>(const TransferMessage&) const = default;
};

// The messages the rank at `c` exchanges for `action`, one of its isends or irecvs. Between
// stages of one DP: the action's bytes to or from each of plan_transfer_peers. Through the
// communicator (plan_relays), for a slot of S bytes (half the action's) from the sending mesh of
// E replicas to the receiving mesh of L, whether activations forward or gradients back: the
// communicator is the sending or receiving encoder-side stage's first rank (tp 0, dp 0); each
// other replica of the sending mesh sends it its share from its tp 0 rank; it then sends every
// rank of each receiving replica but itself that replica's part. Shares and parts are the
// action's relay_shares and relay_parts, or S / E and S / L without them. Other ranks exchange
// nothing.
std::vector<TransferMessage> plan_transfer_messages(const ExecutionPlan& plan, const RankCoordinates& c,
                                                    const PlanAction& action);

nlohmann::json execution_plan_json(const ExecutionPlan& plan);
// Reads and checks a plan (docs/live.md): every field, op ids in order, `after` naming earlier
// asynchronous ops, waits naming launched transfers; errors name the JSON path.
ExecutionPlan read_execution_plan(const JsonCursor& root);

}  // namespace weft
