#include "simulator/plan/plan_builder.hpp"

#include <algorithm>
#include <map>
#include <span>
#include <stdexcept>

#include "simulator/core/input_error.hpp"
#include "simulator/engine/expanded_ops.hpp"
#include "simulator/graph/flatten.hpp"
#include "simulator/workload/module_meshes.hpp"

namespace weft {
namespace {

// When an action runs relative to the others: by simulated time, then launches of transfers,
// then waits, then the rest, then by op id.
struct ActionKey {
  TimeNs time = 0;
  int priority = 0;
  std::uint32_t sequence = 0;
  auto operator<=>(const ActionKey&) const = default;
};

constexpr int kLaunch = 0;
constexpr int kWait = 1;
constexpr int kWork = 2;

// A pipeline transfer: the op on a link and the ranks at its ends (simulated rank indices). On
// per-sample data DFLOP's communicator relays a slot between meshes of different DP in one op
// that reads every replica of one and writes every replica of the other (the ranks'
// messages follow from the plan's meshes: plan_transfer_messages).
struct Transfer {
  OpId op;
  std::uint32_t id = 0;
  std::vector<std::size_t> senders;
  std::vector<std::size_t> receivers;
};

struct PendingAction {
  ActionKey key;
  PlanAction action;
  std::vector<OpId> flat_ops;  // the ops of stages, compute and collective actions, in issue order
};

// The plan's action for a pass of the workload.
ActionKind action_kind(const PassOp& pass) {
  if (pass.recompute) return ActionKind::recompute_stage;
  switch (pass.action.kind) {
    case PassKind::forward:
      return ActionKind::forward_stage;
    case PassKind::backward:
      return ActionKind::backward_stage;
    case PassKind::weight:
      return ActionKind::weight_stage;
  }
  throw std::logic_error("execution plan: unknown pass kind");
}

class PlanBuilder {
 public:
  PlanBuilder(const TrainingScenario& scenario, const TrainingWorkload& workload, const SimulationResult& result)
      : scenario_(scenario), dims_(scenario.parallel.dims()), workload_(workload), flat_(flatten(workload.graph)) {
    for_each_expanded_op(workload.graph, result, [&](const ExpandedOp& op) {
      start_.push_back(op.start);
      end_.push_back(op.end);
    });
    for (std::size_t i = 0; i < workload.ranks.size(); ++i) rank_of_device_[workload.ranks[i].device] = i;
    for (const PassOp& pass : workload.passes) pass_of_.emplace(pass.op, &pass);
    predecessors_.resize(flat_.graph.op_count());
    for (std::size_t i = 0; i < flat_.graph.op_count(); ++i) {
      const OpId op(static_cast<OpId::value_type>(i));
      for (OpId successor : flat_.graph.data_and_control_successors(op)) predecessors_[successor.value()].push_back(op);
    }
    find_transfers();
  }

  ExecutionPlan build() {
    ExecutionPlan plan;
    plan.description = scenario_.description;
    plan.dims = dims_;
    plan.simulated_iteration_ns = start_.empty() ? 0 : *std::max_element(end_.begin(), end_.end());
    for (std::size_t r = 0; r < workload_.ranks.size(); ++r) plan.programs.push_back(program(r));
    plan.embedding_stage = embedding_stage(plan);
    for (std::int64_t rank = 0; rank < plan.dims.world_size(); ++rank) {
      const RankCoordinates c = plan.dims.coordinates_of(rank);
      for (std::size_t r = 0; r < workload_.ranks.size(); ++r) {
        const SimulatedRank& simulated = workload_.ranks[r];
        // Folded, a simulated rank stands for its stage's TP, CP (and, unless replicas were
        // simulated apart, DP) peers.
        const bool runs = !workload_.folded ? simulated.rank == rank
                                            : simulated.coordinates.pp == c.pp &&
                                                  (!workload_.per_replica || simulated.coordinates.dp == c.dp);
        if (runs) {
          plan.program_of_rank.push_back(static_cast<int>(r));
          break;
        }
      }
    }
    return plan;
  }

 private:
  DeviceId device_of(OpId op) const { return flat_.graph.op_device(op); }

  // The stage other than the last whose ops reduce over the embedding communicator: where a
  // model of several modules has its language model's first layer (0 for a model of one).
  static int embedding_stage(const ExecutionPlan& plan) {
    for (const PlanProgram& program : plan.programs) {
      if (program.stage == plan.dims.pp - 1) continue;
      for (const PlanAction& action : program.actions) {
        for (const PlanOp& op : action.ops) {
          if (op.group == "embedding") return program.stage;
        }
      }
    }
    return 0;
  }

  bool on_compute_stream(OpId op) const { return flat_.graph.stream(flat_.graph.op_stream(op)).name == "compute"; }

  void find_transfers() {
    std::map<DeviceId, std::vector<std::size_t>> ends;  // link device -> ranks touching it
    for (std::size_t r = 0; r < workload_.ranks.size(); ++r) {
      for (DeviceId link : workload_.ranks[r].links) ends[link].push_back(r);
    }
    auto ranks_of = [&](std::span<const TensorId> tensors) {
      std::vector<std::size_t> ranks;
      for (TensorId tensor : tensors) {
        const std::size_t rank = rank_of_device_.at(flat_.graph.tensor_device(tensor));
        if (std::find(ranks.begin(), ranks.end(), rank) == ranks.end()) ranks.push_back(rank);
      }
      return ranks;
    };
    for (std::size_t i = 0; i < flat_.graph.op_count(); ++i) {
      const OpId op(static_cast<OpId::value_type>(i));
      const auto link = ends.find(device_of(op));
      if (link == ends.end()) continue;
      Transfer transfer;
      transfer.op = op;
      transfer.id = static_cast<std::uint32_t>(transfers_.size());
      transfer.receivers = ranks_of(flat_.graph.op_outputs(op));
      if (link->second.size() == 2 && transfer.receivers.size() == 1) {
        transfer.senders = {link->second[0] == transfer.receivers[0] ? link->second[1] : link->second[0]};
      } else {
        transfer.senders = ranks_of(flat_.graph.op_inputs(op));
      }
      if (transfer.senders.empty() || transfer.receivers.empty()) {
        throw std::logic_error("execution plan: a pipeline transfer must join ranks that send and ranks that receive");
      }
      transfers_.push_back(std::move(transfer));
    }
  }

  int stage_of(std::size_t rank) const { return workload_.ranks[rank].coordinates.pp; }

  std::string group_of(const OpWork& work) const {
    if (category_of(work.op_class) != OpCategory::communication) return {};
    return std::string(kCommGroupKindNames.name(workload_.cost_model->group(work.comm_group).kind));
  }

  PlanProgram program(std::size_t rank) {
    const DeviceId device = workload_.ranks[rank].device;
    std::vector<PendingAction> actions;
    // Ops of the rank: each pass composite one stage action, every other op an action of its own.
    std::map<OpId, std::size_t> action_of_original;
    for (std::size_t i = 0; i < flat_.graph.op_count(); ++i) {
      const OpId op(static_cast<OpId::value_type>(i));
      if (device_of(op) != device) continue;
      const OpId original = flat_.original_op[i];
      const bool pass = workload_.graph.is_composite(original);
      auto [it, inserted] = action_of_original.try_emplace(original, actions.size());
      if (inserted) {
        PendingAction pending;
        if (pass) {
          const PassOp& record = *pass_of_.at(original);
          pending.action.kind = action_kind(record);
          pending.action.chunk = record.action.chunk;
          pending.action.microbatch = record.action.microbatch;
        } else {
          const bool collective = is_collective_class(flat_.graph.op_work(op).op_class);
          pending.action.kind = collective ? ActionKind::collective : ActionKind::compute;
        }
        pending.key = {start_[i], kWork, static_cast<std::uint32_t>(i)};
        actions.push_back(std::move(pending));
      }
      PendingAction& pending = actions[it->second];
      pending.flat_ops.push_back(op);
      pending.key.time = std::min(pending.key.time, start_[i]);
    }
    for (PendingAction& pending : actions) {
      std::sort(pending.flat_ops.begin(), pending.flat_ops.end(), [&](OpId a, OpId b) {
        return std::make_pair(start_[a.value()], a.value()) < std::make_pair(start_[b.value()], b.value());
      });
    }
    add_transfers(rank, actions);
    std::sort(actions.begin(), actions.end(),
              [](const PendingAction& a, const PendingAction& b) { return a.key < b.key; });
    PlanProgram program;
    program.label = workload_.graph.device(device).name;
    program.stage = stage_of(rank);
    number_ops(actions, program);
    return program;
  }

  // The rank's launches and waits of pipeline transfers.
  void add_transfers(std::size_t rank, std::vector<PendingAction>& actions) {
    auto among = [rank](const std::vector<std::size_t>& ranks) {
      return std::find(ranks.begin(), ranks.end(), rank) != ranks.end();
    };
    for (const Transfer& transfer : transfers_) {
      const bool sends = among(transfer.senders);
      if (!sends && !among(transfer.receivers)) continue;
      const std::size_t i = transfer.op.value();
      PlanAction launch;
      launch.kind = sends ? ActionKind::isend : ActionKind::irecv;
      launch.transfer = transfer.id;
      launch.peer_stage = stage_of(sends ? transfer.receivers.front() : transfer.senders.front());
      launch.tag = transfer.id;
      launch.bytes = flat_.graph.op_work(transfer.op).network_bytes;
      launch.name = flat_.graph.display_name(transfer.op);
      add_relay_bytes(transfer, launch);
      PlanAction wait;
      wait.kind = sends ? ActionKind::wait_isend : ActionKind::wait_irecv;
      wait.transfer = transfer.id;
      const ActionKey wait_key = sends ? ActionKey{end_[i], kWait, transfer.id} : first_reader(transfer, rank, actions);
      actions.push_back({{start_[i], kLaunch, transfer.id}, std::move(launch), {}});
      actions.push_back({wait_key, std::move(wait), {}});
    }
  }

  // DFLOP's communicator on per-sample data: one op relays a slot between every replica of the
  // encoder's mesh (the earlier stage) and every replica of the language model's. The messages
  // carry each replica's own bytes: on the encoder's side those of the tensors its replicas give
  // or take; on the language model's those of each replica's own microbatch, as relay_bytes counts
  // the slot (backward, the op reads each replica's whole input gradient, not only the part that
  // crosses). Other transfers leave the messages to the plan's meshes (an even split).
  void add_relay_bytes(const Transfer& transfer, PlanAction& launch) const {
    const int from = stage_of(transfer.senders.front());
    const int to = stage_of(transfer.receivers.front());
    if (!workload_.shapes || !plan_relays(dims_, from, to)) return;
    const bool forward = from < to;
    const int encoder = std::min(from, to);
    const int language = std::max(from, to);
    if (workload_.shapes->replicas != dims_.dp_at(language)) return;
    const auto encoder_tensors = forward ? flat_.graph.op_inputs(transfer.op) : flat_.graph.op_outputs(transfer.op);
    std::vector<std::int64_t> encoder_bytes = bytes_by_replica(encoder_tensors, dims_.dp_at(encoder));
    if (encoder_bytes.empty()) return;
    // The slot's microbatch: that of the pass whose output the relay reads.
    const OpId producer = flat_.graph.tensor_producer(flat_.graph.op_inputs(transfer.op).front());
    const int microbatch = pass_of_.at(flat_.original_op[producer.value()])->action.microbatch;
    std::vector<std::int64_t> language_bytes;
    for (int replica = 0; replica < dims_.dp_at(language); ++replica) {
      language_bytes.push_back(relay_bytes(scenario_, encoder, language, workload_.shapes->at(replica, microbatch)) /
                               2);
    }
    launch.relay_shares = std::move(encoder_bytes);
    launch.relay_parts = std::move(language_bytes);
    if (!forward) std::swap(launch.relay_shares, launch.relay_parts);
  }

  // The bytes of `tensors` by the data-parallel replica of their rank (the same on each rank of a
  // replica); empty unless every one of `replicas` holds one.
  std::vector<std::int64_t> bytes_by_replica(std::span<const TensorId> tensors, int replicas) const {
    std::vector<std::int64_t> bytes(static_cast<std::size_t>(replicas), -1);
    for (TensorId tensor : tensors) {
      const int dp = workload_.ranks[rank_of_device_.at(flat_.graph.tensor_device(tensor))].coordinates.dp;
      if (dp < replicas) bytes[static_cast<std::size_t>(dp)] = flat_.graph.tensor_bytes(tensor);
    }
    if (std::find(bytes.begin(), bytes.end(), -1) != bytes.end()) return {};
    return bytes;
  }

  // Just before the first action of `rank`, a receiver, that reads what `transfer` brings it.
  ActionKey first_reader(const Transfer& transfer, std::size_t rank, const std::vector<PendingAction>& actions) const {
    const auto outputs = flat_.graph.op_outputs(transfer.op);
    const auto received = std::find_if(outputs.begin(), outputs.end(), [&](TensorId tensor) {
      return flat_.graph.tensor_device(tensor) == workload_.ranks[rank].device;
    });
    std::optional<ActionKey> first;
    for (const PendingAction& pending : actions) {
      for (OpId op : pending.flat_ops) {
        const auto inputs = flat_.graph.op_inputs(op);
        if (std::find(inputs.begin(), inputs.end(), *received) == inputs.end()) continue;
        if (!first || pending.key < *first) first = pending.key;
      }
    }
    if (!first) return {end_[transfer.op.value()], kWait, transfer.id};
    return {first->time, kWait, transfer.id};
  }

  // Gives every op its id in program order and lists the asynchronous ops each waits for.
  void number_ops(std::vector<PendingAction>& actions, PlanProgram& program) {
    std::map<OpId, std::uint32_t> id_of;
    std::uint32_t next = 0;
    for (PendingAction& pending : actions) {
      for (OpId op : pending.flat_ops) {
        PlanOp plan_op;
        plan_op.id = next;
        plan_op.name = flat_.graph.display_name(op);
        plan_op.work = flat_.graph.op_work(op);
        plan_op.group = group_of(plan_op.work);
        plan_op.work.comm_group = 0;
        plan_op.stream = flat_.graph.stream(flat_.graph.op_stream(op)).name;
        plan_op.async = !on_compute_stream(op);
        for (OpId before : predecessors_[op.value()]) {
          if (device_of(before) != device_of(op) || on_compute_stream(before)) continue;
          const auto earlier = id_of.find(before);
          if (earlier == id_of.end()) {
            throw std::logic_error("execution plan: '" + plan_op.name + "' would be issued before '" +
                                   flat_.graph.display_name(before) + "', which it waits for");
          }
          plan_op.after.push_back(earlier->second);
        }
        std::sort(plan_op.after.begin(), plan_op.after.end());
        id_of[op] = next++;
        pending.action.ops.push_back(std::move(plan_op));
      }
      program.actions.push_back(std::move(pending.action));
    }
  }

  const TrainingScenario& scenario_;
  const ParallelDims dims_;  // the plan's meshes
  const TrainingWorkload& workload_;
  FlatGraph flat_;
  std::vector<TimeNs> start_;
  std::vector<TimeNs> end_;
  std::map<DeviceId, std::size_t> rank_of_device_;
  std::map<OpId, const PassOp*> pass_of_;  // the workload's passes by their composite op
  std::vector<std::vector<OpId>> predecessors_;
  std::vector<Transfer> transfers_;
};

// Modules on meshes of their own: a transfer hands each rank of the receiving mesh the whole
// activation (plan_transfer_messages), where sequence parallelism would have each rank hand on
// its TP shard of the tokens.
void check_mesh_scope(const TrainingScenario& scenario) {
  const ParallelPlan& p = scenario.parallel;
  if (!p.per_module_meshes()) return;
  bool tp_differs = false;
  for (int position = 0; position < p.pp; ++position) tp_differs = tp_differs || p.mesh_at(position).tp != p.tp;
  if (tp_differs && p.sequence_parallel) {
    throw InputError(
        "parallel.modules: with sequence_parallel each rank hands on its TP shard of the tokens, which execution plans "
        "do not reshard between meshes of different TP; emit the plan without sequence parallelism");
  }
}

}  // namespace

void check_execution_plan_scope(const TrainingScenario& scenario) {
  if (scenario.parallel.cp > 1) {
    throw InputError("execution plans do not cover context parallelism yet (parallel.cp = " +
                     std::to_string(scenario.parallel.cp) + ")");
  }
  if (scenario.overlaps_tp_communication()) {
    throw InputError(
        "execution plans do not cover TP communication overlapped with the GEMMs yet (the stack's tp_comm_overlap, "
        "with sequence parallelism at parallel.tp = " +
        std::to_string(scenario.parallel.tp) +
        "); weft live runs TP collectives on their own: simulate the plan it runs with \"stack\": {\"base\": \"" +
        scenario.stack.name + "\", \"tp_comm_overlap\": false}");
  }
  check_mesh_scope(scenario);
  if (scenario.parallel.hybrid_sharding()) {
    throw InputError("execution plans do not cover hybrid sharding yet (parallel.dp_shard = " +
                     std::to_string(scenario.parallel.dp_shard) + " of dp = " + std::to_string(scenario.parallel.dp) +
                     "): simulate the plan without it to emit it");
  }
  if (scenario.parallel.redundant_computation) {
    throw InputError(
        "execution plans do not run Bamboo's redundant computation (parallel.redundant_computation): simulate the "
        "plan without it to emit it");
  }
  // A live run meets its hardware as it is: a plan is the same for slow or mixed GPUs.
  if (scenario.cluster.stragglers || !scenario.cluster.node_groups.empty()) {
    throw InputError(
        "execution plans are made for clusters of one GPU type at full speed (the cluster's stragglers or "
        "node_groups): "
        "simulate the plan without them to emit it");
  }
}

ExecutionPlan build_execution_plan(const TrainingScenario& scenario, const TrainingWorkload& workload,
                                   const SimulationResult& result) {
  check_execution_plan_scope(scenario);
  return PlanBuilder(scenario, workload, result).build();
}

}  // namespace weft
