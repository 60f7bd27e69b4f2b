#include "simulator/graph/graph_builder.hpp"

#include <algorithm>
#include <deque>
#include <limits>

#include "simulator/core/input_error.hpp"

namespace weft {
namespace {

template <class Id>
Id next_id(std::size_t size) {
  if (size >= std::numeric_limits<typename Id::value_type>::max()) throw InputError("graph exceeds 2^32 - 1 nodes");
  return Id(static_cast<typename Id::value_type>(size));
}

}  // namespace

DeviceSpecId GraphBuilder::add_device_spec(DeviceSpec spec) {
  const auto id = next_id<DeviceSpecId>(graph_.specs_.size());
  graph_.specs_.push_back(std::move(spec));
  return id;
}

DeviceId GraphBuilder::add_device(std::string name, DeviceSpecId spec) {
  if (!spec.valid() || spec.value() >= graph_.specs_.size()) throw InputError("add_device: unknown device spec id");
  const auto id = next_id<DeviceId>(graph_.devices_.size());
  graph_.devices_.push_back({std::move(name), spec, graph_.specs_[spec.value()].memory_capacity});
  return id;
}

void GraphBuilder::set_memory_capacity(DeviceId device, Bytes capacity) {
  if (!device.valid() || device.value() >= graph_.devices_.size()) throw InputError("unknown device id");
  if (capacity < 0) throw InputError("memory capacity must be >= 0");
  graph_.devices_[device.value()].memory_capacity = capacity;
}

StreamId GraphBuilder::add_stream(DeviceId device, std::string name, StreamPolicy policy) {
  if (!device.valid() || device.value() >= graph_.devices_.size()) throw InputError("add_stream: unknown device id");
  const auto id = next_id<StreamId>(graph_.streams_.size());
  graph_.streams_.push_back({std::move(name), device, policy});
  last_in_stream_.push_back(OpId::none());
  return id;
}

WorkId GraphBuilder::intern_work(const OpWork& work) {
  if (auto it = work_index_.find(work); it != work_index_.end()) return it->second;
  if (work.flops < 0 || work.memory_bytes < 0 || work.network_bytes < 0) {
    throw InputError("op work must have non-negative FLOPs and bytes");
  }
  const auto id = next_id<WorkId>(graph_.works_.size());
  graph_.works_.push_back(work);
  work_index_.emplace(work, id);
  return id;
}

TensorId GraphBuilder::add_tensor(std::string_view name, DeviceId device, TensorKind kind, Bytes bytes) {
  if (!device.valid() || device.value() >= graph_.devices_.size()) {
    throw InputError("tensor '" + std::string(name) + "': unknown device id");
  }
  if (graph_.device_spec(device).kind == DeviceKind::link) {
    throw InputError("tensor '" + std::string(name) + "' is placed on link device '" + graph_.device(device).name +
                     "', which has no memory");
  }
  if (bytes < 0) throw InputError("tensor '" + std::string(name) + "' has negative size");
  const auto id = next_id<TensorId>(graph_.tensors_.size());
  graph_.tensors_.push_back(
      {bytes, device, OpId::none(), name.empty() ? NameId::none() : graph_.names_.intern(name), kind});
  return id;
}

OpId GraphBuilder::add_op(NameId name, WorkId work, StreamId stream) {
  if (!work.valid() || work.value() >= graph_.works_.size()) throw InputError("add_op: unknown work id");
  if (!stream.valid() || stream.value() >= graph_.streams_.size()) throw InputError("add_op: unknown stream id");
  const auto id = next_id<OpId>(graph_.ops_.size());
  graph_.ops_.push_back({work, stream, CollectiveId::none(), OpId::none(), 0, name});
  if (graph_.stream(stream).policy == StreamPolicy::in_order) {
    OpId& last = last_in_stream_[stream.value()];
    if (last.valid()) graph_.ops_[last.value()].next_in_stream = id;
    last = id;
  }
  return id;
}

void GraphBuilder::check_op(OpId op, const char* where) const {
  if (!op.valid() || op.value() >= graph_.ops_.size()) {
    throw InputError(std::string(where) + ": unknown op id " + std::to_string(op.value()));
  }
}

void GraphBuilder::check_tensor(TensorId tensor, const char* where) const {
  if (!tensor.valid() || tensor.value() >= graph_.tensors_.size()) {
    throw InputError(std::string(where) + ": unknown tensor id " + std::to_string(tensor.value()));
  }
}

void GraphBuilder::add_input(OpId op, TensorId tensor) {
  check_op(op, "add_input");
  check_tensor(tensor, "add_input");
  if (graph_.tensor_producer(tensor) == op) {
    throw InputError("op '" + graph_.display_name(op) + "' consumes its own output '" +
                     std::string(graph_.tensor_name(tensor)) + "'");
  }
  inputs_.emplace_back(op, tensor);
}

void GraphBuilder::add_output(OpId op, TensorId tensor) {
  check_op(op, "add_output");
  check_tensor(tensor, "add_output");
  OpId& producer = graph_.tensors_[tensor.value()].producer;
  if (producer.valid()) {
    throw InputError("tensor '" + std::string(graph_.tensor_name(tensor)) + "' has two producers: '" +
                     graph_.display_name(producer) + "' and '" + graph_.display_name(op) + "'");
  }
  producer = op;
  outputs_.emplace_back(op, tensor);
}

void GraphBuilder::add_control_edge(OpId before, OpId after) {
  check_op(before, "add_control_edge");
  check_op(after, "add_control_edge");
  if (before == after) throw InputError("op '" + graph_.display_name(before) + "' depends on itself");
  control_edges_.emplace_back(before, after);
}

void GraphBuilder::check_collective_member(OpId member, OpId first) const {
  const std::string name = graph_.display_name(member);
  if (graph_.op_collective(member).valid()) throw InputError("op '" + name + "' is in two collectives");
  const OpClass op_class = graph_.op_work(member).op_class;
  if (!is_collective_class(op_class)) {
    throw InputError("op '" + name + "' of class " + std::string(kOpClassNames.name(op_class)) +
                     " cannot be a collective member");
  }
  if (graph_.stream(graph_.op_stream(member)).policy != StreamPolicy::in_order) {
    throw InputError("collective member '" + name + "' must run on an in_order stream");
  }
  if (member == first) return;
  if (graph_.op_work(first).op_class != op_class) {
    throw InputError("collective members '" + graph_.display_name(first) + "' and '" + name +
                     "' are of different classes");
  }
}

CollectiveId GraphBuilder::add_collective(std::string_view name, std::span<const OpId> members) {
  if (members.empty()) throw InputError("collective '" + std::string(name) + "' has no members");
  const auto id = next_id<CollectiveId>(graph_.collective_name_.size());
  std::vector<DeviceId> devices;
  for (OpId member : members) {
    check_op(member, "add_collective");
    check_collective_member(member, members.front());
    devices.push_back(graph_.op_device(member));
  }
  std::sort(devices.begin(), devices.end());
  if (auto dup = std::adjacent_find(devices.begin(), devices.end()); dup != devices.end()) {
    throw InputError("collective '" + std::string(name) + "' has two members on device '" + graph_.device(*dup).name +
                     "'");
  }
  for (OpId member : members) {
    graph_.ops_[member.value()].collective = id;
    collective_members_.emplace_back(id, member);
  }
  graph_.collective_name_.push_back(name.empty() ? NameId::none() : graph_.names_.intern(name));
  return id;
}

OpId GraphBuilder::collective_representative(OpId op) const {
  const CollectiveId collective = graph_.op_collective(op);
  return collective.valid() ? graph_.collective_members(collective).front() : op;
}

void GraphBuilder::compute_dependency_counts() {
  for (std::size_t i = 0; i < graph_.op_count(); ++i) {
    const OpId op(static_cast<OpId::value_type>(i));
    graph_.for_each_successor(op, [&](OpId successor) { ++graph_.ops_[successor.value()].dependency_count; });
  }
}

// Kahn's algorithm over ops, with each collective's members merged into one node (they start
// together). Whatever cannot be released lies on, or behind, a cycle.
void GraphBuilder::check_acyclic() const {
  const std::size_t op_count = graph_.op_count();
  std::vector<std::uint32_t> in_degree(op_count, 0);
  for (std::size_t i = 0; i < op_count; ++i) {
    const OpId op(static_cast<OpId::value_type>(i));
    in_degree[collective_representative(op).value()] += graph_.dependency_count(op);
  }
  std::vector<OpId> ready;
  for (std::size_t i = 0; i < op_count; ++i) {
    const OpId op(static_cast<OpId::value_type>(i));
    if (collective_representative(op) == op && in_degree[i] == 0) ready.push_back(op);
  }
  std::size_t released = 0;
  auto release = [&](OpId op) {
    ++released;
    graph_.for_each_successor(op, [&](OpId successor) {
      const OpId node = collective_representative(successor);
      if (--in_degree[node.value()] == 0) ready.push_back(node);
    });
  };
  while (!ready.empty()) {
    const OpId node = ready.back();
    ready.pop_back();
    if (const CollectiveId collective = graph_.op_collective(node); collective.valid()) {
      for (OpId member : graph_.collective_members(collective)) release(member);
    } else {
      release(node);
    }
  }
  if (released != op_count) report_cycle(in_degree);
}

void GraphBuilder::report_cycle(const std::vector<std::uint32_t>& remaining_in_degree) const {
  const std::size_t op_count = graph_.op_count();
  auto stuck = [&](OpId op) { return remaining_in_degree[collective_representative(op).value()] > 0; };
  // For every stuck node, one stuck predecessor: each has one, or it would have been released.
  std::vector<OpId> stuck_predecessor(op_count, OpId::none());
  for (std::size_t i = 0; i < op_count; ++i) {
    const OpId op(static_cast<OpId::value_type>(i));
    if (!stuck(op)) continue;
    graph_.for_each_successor(op, [&](OpId successor) {
      OpId& slot = stuck_predecessor[collective_representative(successor).value()];
      if (!slot.valid()) slot = op;
    });
  }
  OpId start = OpId::none();
  for (std::size_t i = 0; i < op_count && !start.valid(); ++i) {
    const OpId op(static_cast<OpId::value_type>(i));
    if (stuck(op) && collective_representative(op) == op) start = op;
  }
  // Walk predecessors until a node repeats; the repeated stretch is a cycle.
  std::vector<OpId> walk;
  std::vector<std::int64_t> position(op_count, -1);
  OpId node = start;
  while (position[node.value()] < 0) {
    position[node.value()] = static_cast<std::int64_t>(walk.size());
    walk.push_back(node);
    node = collective_representative(stuck_predecessor[node.value()]);
  }
  std::vector<OpId> cycle(walk.begin() + position[node.value()], walk.end());
  std::reverse(cycle.begin(), cycle.end());  // predecessor order -> dependency order
  std::rotate(cycle.begin(), std::min_element(cycle.begin(), cycle.end()), cycle.end());
  auto label = [&](OpId op) {
    const CollectiveId collective = graph_.op_collective(op);
    if (collective.valid()) return "collective '" + std::string(graph_.collective_name(collective)) + "'";
    return "'" + graph_.display_name(op) + "'";
  };
  std::string message = "dependency cycle: ";
  for (OpId op : cycle) message += label(op) + " -> ";
  message += label(cycle.front());
  message += " (data, control, stream-order or collective dependencies)";
  throw InputError(message);
}

Graph GraphBuilder::build() && {
  const std::size_t op_count = graph_.op_count();
  graph_.op_outputs_ = Csr<OpId, TensorId>::from_pairs(op_count, std::move(outputs_));
  graph_.collective_members_ =
      Csr<CollectiveId, OpId>::from_pairs(graph_.collective_name_.size(), std::move(collective_members_));
  // Data edges (producer -> consumer, one per consumed input) then control edges, by op.
  std::vector<std::pair<OpId, OpId>> successors;
  successors.reserve(inputs_.size() + control_edges_.size());
  for (const auto& [op, tensor] : inputs_) {
    const OpId producer = graph_.tensor_producer(tensor);
    if (producer == op) {
      throw InputError("op '" + graph_.display_name(op) + "' consumes its own output '" +
                       std::string(graph_.tensor_name(tensor)) + "'");
    }
    if (producer.valid()) successors.emplace_back(producer, op);
  }
  successors.insert(successors.end(), control_edges_.begin(), control_edges_.end());
  std::vector<std::pair<OpId, OpId>>().swap(control_edges_);
  // Within one op, successors keep the order their edges were added: data edges, then control.
  graph_.successors_ = Csr<OpId, OpId>::from_pairs(op_count, std::move(successors));
  {
    std::vector<std::pair<TensorId, OpId>> consumers;
    consumers.reserve(inputs_.size());
    for (const auto& [op, tensor] : inputs_) consumers.emplace_back(tensor, op);
    graph_.tensor_consumers_ = Csr<TensorId, OpId>::from_pairs(graph_.tensor_count(), std::move(consumers));
  }
  graph_.op_inputs_ = Csr<OpId, TensorId>::from_pairs(op_count, std::move(inputs_));
  compute_dependency_counts();
  check_acyclic();
  graph_.names_.freeze();
  work_index_ = {};
  return std::move(graph_);
}

}  // namespace weft
