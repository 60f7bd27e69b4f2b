#include "simulator/plan/plan_graph.hpp"

#include <map>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "simulator/core/input_error.hpp"
#include "simulator/graph/graph_builder.hpp"

namespace weft {
namespace {

// The plan's stream of kernels (PlanOp's default), which the rank's host issues one by one
// (docs/host-issue.md).
constexpr std::string_view kHostIssuedStream = "compute";

class PlanGraphBuilder {
 public:
  PlanGraphBuilder(const ExecutionPlan& plan, const ClusterSpec& cluster)
      : plan_(plan), cluster_(cluster), cost_(std::make_unique<ClusterCostModel>(cluster)) {
    gpu_ = b_.add_device_spec(cluster.gpu);
    DeviceSpec link;
    link.name = "p2p-link";
    link.kind = DeviceKind::link;
    link_spec_ = b_.add_device_spec(link);
    first_rank_.assign(plan.programs.size(), -1);
    for (std::size_t rank = plan.program_of_rank.size(); rank-- > 0;)
      first_rank_[static_cast<std::size_t>(plan.program_of_rank[rank])] = static_cast<std::int64_t>(rank);
    programs_.resize(plan.programs.size());
  }

  PlanGraph build() && {
    for (std::size_t p = 0; p < plan_.programs.size(); ++p) {
      if (first_rank_[p] < 0) continue;  // a program no rank runs
      programs_[p].device = b_.add_device(plan_.dims.label_of(coordinates(p)), gpu_);
      for (const PlanAction& action : plan_.programs[p].actions) issue(p, action);
    }
    connect_transfers();
    join_embedding_collectives();
    return {std::move(b_).build(), std::move(cost_)};
  }

 private:
  struct Program {
    DeviceId device;
    std::map<std::string, StreamId> streams;
    std::map<std::uint32_t, OpId> ops;         // by plan op id
    OpId last_sync = OpId::none();             // the synchronous op issued last
    std::vector<std::uint32_t> pending_waits;  // transfers waited for since the last op issued
    std::vector<OpId> embedding_ops;
  };
  struct Transfer {
    OpId send = OpId::none();
    std::vector<OpId> gated;  // ops issued after a wait for it
    bool received = false;
  };

  RankCoordinates coordinates(std::size_t program) const { return plan_.dims.coordinates_of(first_rank_[program]); }

  StreamId stream(std::size_t p, const std::string& name) {
    auto [it, added] = programs_[p].streams.try_emplace(name, StreamId::none());
    if (added) it->second = b_.add_stream(programs_[p].device, name, StreamPolicy::in_order, name == kHostIssuedStream);
    return it->second;
  }

  std::uint32_t group(std::size_t p, const std::string& name) {
    const auto [it, added] = groups_.try_emplace({p, name}, 0);
    if (!added) return it->second;
    const CommGroupKind kind = kCommGroupKindNames.parse(name).value();
    std::vector<std::int64_t> members;
    for (int rank : plan_group_members(plan_, coordinates(p), kind)) members.push_back(rank);
    it->second = cost_->add_group(make_comm_group(kind, members, cluster_));
    return it->second;
  }

  // After an op is added: the waits issued before it gate it, and a synchronous op is next in line.
  void issued(std::size_t p, OpId op, bool synchronous) {
    Program& program = programs_[p];
    if (program.last_sync.valid()) b_.add_control_edge(program.last_sync, op);
    for (std::uint32_t transfer : program.pending_waits) transfers_[transfer].gated.push_back(op);
    program.pending_waits.clear();
    if (synchronous) program.last_sync = op;
  }

  void issue(std::size_t p, const PlanAction& action) {
    switch (action.kind) {
      case ActionKind::isend:
        send(p, action);
        return;
      case ActionKind::irecv:
        transfers_[action.transfer].received = true;
        return;
      case ActionKind::wait_isend:
      case ActionKind::wait_irecv:
        programs_[p].pending_waits.push_back(action.transfer);
        return;
      default:
        break;
    }
    Program& program = programs_[p];
    for (const PlanOp& op : action.ops) {
      OpWork work = op.work;
      if (!op.group.empty()) work.comm_group = group(p, op.group);
      const OpId id = b_.add_op(op.name, b_.intern_work(work), stream(p, op.stream));
      for (std::uint32_t before : op.after) b_.add_control_edge(program.ops.at(before), id);
      issued(p, id, !op.async);
      program.ops.emplace(op.id, id);
      if (op.group == "embedding") program.embedding_ops.push_back(id);
    }
  }

  void send(std::size_t p, const PlanAction& action) {
    // One message stands for all, as weft simulate times them: the program's first rank (tp 0) has
    // a peer whatever the TP of the meshes; through DFLOP's communicator, the slot crosses the
    // communicator rank (the sending stage's or the receiving stage's first) towards the other.
    const std::int64_t from = first_rank_[p];
    const std::int64_t to = plan_relays(plan_.dims, coordinates(p).pp, action.peer_stage)
                                ? plan_.dims.first_rank(action.peer_stage)
                                : plan_transfer_peers(plan_, coordinates(p), action.peer_stage, true).front();
    const auto key = std::make_pair(from, to);
    auto [link, added] = links_.try_emplace(key, StreamId::none());
    if (added) {
      const DeviceId device = b_.add_device(
          fmt::format("p2p stage {} -> {} (rank {} -> {})", coordinates(p).pp, action.peer_stage, from, to),
          link_spec_);
      link->second = b_.add_stream(device, "transfer", StreamPolicy::first_ready);
    }
    OpWork work;
    work.op_class = OpClass::send;
    work.network_bytes = action.bytes;
    work.shape = {action.bytes};
    const std::array<std::int64_t, 2> pair{from, to};
    work.comm_group = cost_->add_group(make_comm_group(CommGroupKind::pp, pair, cluster_));
    const OpId op = b_.add_op(action.name.empty() ? "transfer " + std::to_string(action.transfer) : action.name,
                              b_.intern_work(work), link->second);
    issued(p, op, false);
    transfers_[action.transfer].send = op;
  }

  void connect_transfers() {
    for (const auto& [id, transfer] : transfers_) {
      if (!transfer.send.valid() || !transfer.received) {
        throw InputError(fmt::format("transfer {}: the plan has its {} but not its {}", id,
                                     transfer.send.valid() ? "isend" : "irecv",
                                     transfer.send.valid() ? "irecv" : "isend"));
      }
      for (OpId op : transfer.gated) b_.add_control_edge(transfer.send, op);
    }
  }

  void join_embedding_collectives() {
    std::vector<const Program*> holders;
    for (const Program& program : programs_) {
      if (!program.embedding_ops.empty()) holders.push_back(&program);
    }
    if (holders.size() < 2) return;
    for (std::size_t n = 0; n < holders.front()->embedding_ops.size(); ++n) {
      std::vector<OpId> members;
      for (const Program* program : holders) {
        if (n < program->embedding_ops.size()) members.push_back(program->embedding_ops[n]);
      }
      if (members.size() > 1) b_.add_collective("embedding sync", members);
    }
  }

  const ExecutionPlan& plan_;
  const ClusterSpec& cluster_;
  std::unique_ptr<ClusterCostModel> cost_;
  GraphBuilder b_;
  DeviceSpecId gpu_;
  DeviceSpecId link_spec_;
  std::vector<std::int64_t> first_rank_;
  std::vector<Program> programs_;
  std::map<std::pair<std::size_t, std::string>, std::uint32_t> groups_;
  std::map<std::pair<std::int64_t, std::int64_t>, StreamId> links_;
  std::map<std::uint32_t, Transfer> transfers_;
};

}  // namespace

PlanGraph plan_graph(const ExecutionPlan& plan, const ClusterSpec& cluster) {
  return PlanGraphBuilder(plan, cluster).build();
}

}  // namespace weft
