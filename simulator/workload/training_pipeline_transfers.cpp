// Pipeline transfers between stages (training_graph_builder.hpp): the link each pair of ranks
// sends over, the activation or gradient tensor crossing it, and the send.
#include <algorithm>

#include "simulator/workload/module_meshes.hpp"
#include "simulator/workload/training_graph_builder.hpp"

namespace weft::training_graph {

StreamId TrainingGraphBuilder::link(const Peer& from, const Peer& to) {
  const auto key = std::make_pair(from.rank, to.rank);
  if (auto it = links_.find(key); it != links_.end()) return it->second;
  const DeviceId device = b_->add_device(
      fmt::format("p2p stage {} -> {} (rank {} -> {})", from.coordinates.pp, to.coordinates.pp, from.rank, to.rank),
      link_spec_);
  const StreamId stream = b_->add_stream(device, "transfer", StreamPolicy::first_ready);
  ranks_[from.simulated_index].links.push_back(device);
  ranks_[to.simulated_index].links.push_back(device);
  links_.emplace(key, stream);
  return stream;
}

PerPeer<TensorId> TrainingGraphBuilder::boundary_tensor(const BoundaryKey& key, int receiving_stage) {
  if (relayed(key)) return relay(key).received[static_cast<std::size_t>(replica_of(receiving_stage))];
  if (boundaries_.empty()) boundaries_.resize(static_cast<std::size_t>(group_count()) * s_.microbatches() * 2);
  PerPeer<TensorId>& tensors =
      boundaries_[(static_cast<std::size_t>(key.group) * s_.microbatches() + static_cast<std::size_t>(key.microbatch)) *
                      2 +
                  (key.backward ? 1 : 0)];
  if (tensors.empty()) tensors = add_tensors(receiving_stage, boundary_bytes(key.group), TensorKind::activation);
  return tensors;
}

void TrainingGraphBuilder::send(int stage, int to_group, const BoundaryKey& key, const PerPeer<TensorId>& value,
                                std::string_view what) {
  if (relayed(key)) {
    const OpId relay_op = relay(key).op;
    for (TensorId tensor : value) b_->add_input(relay_op, tensor);
    return;
  }
  const int to_stage = stage_of_group(stage, to_group);
  const auto& from_peers = stages_[static_cast<std::size_t>(stage)];
  const auto& to_peers = stages_[static_cast<std::size_t>(to_stage)];
  const PerPeer<TensorId> received = boundary_tensor(key, to_stage);
  // Between meshes of different DP, DFLOP's communicator relays the slot (module_meshes.hpp).
  const int sender = key.group % s_.parallel.pp;
  const Bytes relay =
      relay_bytes(s_, sender, sender == position_of(stage) ? position_of(to_stage) : position_of(stage));
  const Bytes bytes = relay > 0 ? relay : boundary_bytes(key.group);
  WorkId& work_id = transfer_work_[{stage, to_stage, bytes}];
  if (!work_id.valid()) {
    OpWork transfer;
    transfer.op_class = OpClass::send;
    transfer.network_bytes = bytes;
    transfer.shape = {transfer.network_bytes};
    transfer.comm_group = point_to_point_group(CommGroupKind::pp, from_peers.front().rank, to_peers.front().rank);
    work_id = b_->intern_work(transfer);
  }
  const NameId send_name = b_->intern_name(
      name("send {} mb{} stage {} -> {}", what, key.microbatch, position_of(stage), position_of(to_stage)));
  for (std::size_t i = 0; i < from_peers.size(); ++i) {
    const OpId op = b_->add_op(send_name, work_id, link(from_peers[i], to_peers[i]));
    if (!value.empty()) b_->add_input(op, value[i]);
    b_->add_output(op, received[i]);
  }
}

bool TrainingGraphBuilder::relayed(const BoundaryKey& key) const {
  if (!microbatch_shapes_ || !s_.parallel.per_module_meshes()) return false;
  const int pp = s_.parallel.pp;
  return dims_.dp_at(key.group % pp) != dims_.dp_at(graph_.successor(key.group) % pp);
}

TrainingGraphBuilder::Relay& TrainingGraphBuilder::relay(const BoundaryKey& key) {
  auto [it, made] = relays_.try_emplace({key.group, key.microbatch, key.backward});
  Relay& relay = it->second;
  if (!made) return relay;
  const int pp = s_.parallel.pp;
  const int encoder = key.group % pp;  // the communicator's side: the sender forward, the receiver back
  const int reader = graph_.successor(key.group) % pp;
  const int from = key.backward ? reader : encoder;
  const int to = key.backward ? encoder : reader;
  OpWork transfer;
  transfer.op_class = OpClass::send;
  transfer.network_bytes = relay_bytes(s_, encoder, reader, slot_of(*microbatch_shapes_, key.microbatch));
  transfer.shape = {transfer.network_bytes};
  const Peer& first_sender = stages_[static_cast<std::size_t>(stage_of(0, from))].front();
  const Peer& first_receiver = stages_[static_cast<std::size_t>(stage_of(0, to))].front();
  transfer.comm_group = point_to_point_group(CommGroupKind::pp, first_sender.rank, first_receiver.rank);
  const StreamId stream = link(first_sender, first_receiver);
  relay.op = b_->add_op(
      name("relay {} mb{} stage {} -> {}", key.backward ? "gradient" : "activation", key.microbatch, from, to),
      b_->intern_work(transfer), stream);
  // Every rank that gives the communicator its share or takes one from it waits on its link.
  const DeviceId device = b_->stream(stream).device;
  for (int position : {from, to}) {
    for (int replica = 0; replica < replicas_at(position); ++replica) {
      const int stage = stage_of(replica, position);
      for (const Peer& peer : stages_[static_cast<std::size_t>(stage)]) {
        std::vector<DeviceId>& links = ranks_[peer.simulated_index].links;
        if (std::find(links.begin(), links.end(), device) == links.end()) links.push_back(device);
      }
      if (position != to) continue;
      const PerPeer<TensorId> received =
          add_tensors(stage, boundary_bytes(key.group, sample_of(stage, key.microbatch)), TensorKind::activation);
      for (TensorId tensor : received) b_->add_output(relay.op, tensor);
      relay.received.push_back(received);
    }
  }
  return relay;
}

}  // namespace weft::training_graph
