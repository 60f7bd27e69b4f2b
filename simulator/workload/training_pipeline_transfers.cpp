// Pipeline transfers between stages (training_graph_builder.hpp): the link each pair of ranks
// sends over, the activation or gradient tensor crossing it, and the send.
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

}  // namespace weft::training_graph
