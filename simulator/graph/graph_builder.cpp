#include "simulator/graph/graph_builder.hpp"

#include <algorithm>
#include <deque>
#include <limits>
#include <set>
#include <stdexcept>

#include "simulator/core/input_error.hpp"
#include "simulator/graph/subgraph.hpp"

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

StreamId GraphBuilder::add_stream(DeviceId device, std::string name, StreamPolicy policy, bool host_issued) {
  if (!device.valid() || device.value() >= graph_.devices_.size()) throw InputError("add_stream: unknown device id");
  if (host_issued && policy != StreamPolicy::in_order)
    throw InputError("add_stream: a host issues in_order streams only");
  const auto id = next_id<StreamId>(graph_.streams_.size());
  graph_.streams_.push_back({std::move(name), device, policy, host_issued});
  last_in_stream_.push_back(OpId::none());
  return id;
}

void GraphBuilder::copy_platform(const Graph& graph) {
  if (!graph_.specs_.empty() || !graph_.devices_.empty() || !graph_.streams_.empty())
    throw std::logic_error("copy_platform: the builder already has devices");
  for (std::size_t s = 0; s < graph.device_spec_count(); ++s) add_device_spec(graph.spec(DeviceSpecId::at(s)));
  for (std::size_t d = 0; d < graph.device_count(); ++d) {
    const DeviceInfo& device = graph.device(DeviceId::at(d));
    set_memory_capacity(add_device(device.name, device.spec), device.memory_capacity);
  }
  for (std::size_t s = 0; s < graph.stream_count(); ++s) {
    const StreamInfo& stream = graph.stream(StreamId::at(s));
    add_stream(stream.device, stream.name, stream.policy, stream.host_issued);
  }
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
  issue_on_stream(id, stream);
  return id;
}

void GraphBuilder::issue_on_stream(OpId op, StreamId stream) {
  if (graph_.stream(stream).policy != StreamPolicy::in_order) return;
  OpId& last = last_in_stream_[stream.value()];
  if (last.valid()) link_stream_successor(last, stream, op);
  last = op;
}

// Records that `next` follows `previous` in the issue order of `stream`, which `previous` runs on
// as its own stream or, for a composite, as one of its bound streams.
void GraphBuilder::link_stream_successor(OpId previous, StreamId stream, OpId next) {
  OpRecord& record = graph_.ops_[previous.value()];
  if (record.stream == stream) record.next_in_stream = next;
  const CompositeId id = graph_.op_composite(previous);
  if (!id.valid()) return;
  const CompositeRecord& composite = graph_.composites_[id.value()];
  for (std::uint32_t i = 0; i < composite.binding_count; ++i) {
    if (graph_.composite_streams_[composite.binding_begin + i] == stream) {
      graph_.composite_next_[composite.binding_begin + i] = next;
    }
  }
}

SubgraphId GraphBuilder::add_subgraph(std::shared_ptr<const Subgraph> subgraph) {
  if (!subgraph) throw InputError("add_subgraph: no subgraph");
  for (std::size_t i = 0; i < graph_.subgraphs_.size(); ++i) {
    if (graph_.subgraphs_[i] == subgraph) return SubgraphId(static_cast<SubgraphId::value_type>(i));
  }
  const auto id = next_id<SubgraphId>(graph_.subgraphs_.size());
  graph_.subgraphs_.push_back(std::move(subgraph));
  return id;
}

OpId GraphBuilder::add_composite(std::string_view name, SubgraphId subgraph_id, std::span<const StreamId> streams,
                                 std::span<const TensorId> inputs, std::span<const TensorId> outputs,
                                 std::span<const std::uint8_t> weak_inputs) {
  if (!subgraph_id.valid() || subgraph_id.value() >= graph_.subgraphs_.size()) {
    throw InputError("add_composite: unknown subgraph id");
  }
  const Subgraph& subgraph = *graph_.subgraphs_[subgraph_id.value()];
  const Graph& inner = subgraph.graph();
  auto fail = [&](const std::string& message) {
    throw InputError("composite '" + std::string(name) + "' of '" + subgraph.name() + "': " + message);
  };
  if (streams.size() != inner.stream_count()) {
    fail("binds " + std::to_string(streams.size()) + " streams, the template has " +
         std::to_string(inner.stream_count()));
  }
  // Template devices map to outer devices through the streams; specs must agree. A template is
  // usually instantiated many times with one binding: that is checked once.
  if (checked_bindings_.size() <= subgraph_id.value()) checked_bindings_.resize(subgraph_id.value() + 1);
  CheckedBinding& checked = checked_bindings_[subgraph_id.value()];
  const bool same_binding = !checked.streams.empty() &&
                            std::equal(streams.begin(), streams.end(), checked.streams.begin(), checked.streams.end());
  std::vector<DeviceId>& device_of = checked.device_of;
  if (!same_binding) {
    checked.streams.clear();  // until this binding passes
    device_of.assign(inner.device_count(), DeviceId::none());
  }
  for (std::size_t s = 0; s < streams.size() && !same_binding; ++s) {
    if (!streams[s].valid() || streams[s].value() >= graph_.streams_.size()) fail("unknown stream id");
    if (graph_.stream(streams[s]).policy != StreamPolicy::in_order) fail("template streams need in_order streams");
    if (graph_.stream(streams[s]).host_issued != inner.stream(StreamId::at(s)).host_issued)
      fail("binds a host-issued template stream to a stream the host does not issue, or the other way round");
    for (std::size_t t = 0; t < s; ++t) {
      if (streams[t] == streams[s]) fail("binds two template streams to one stream");
    }
    const DeviceId inner_device = inner.stream(StreamId(static_cast<StreamId::value_type>(s))).device;
    const DeviceId outer_device = graph_.stream(streams[s]).device;
    DeviceId& bound = device_of[inner_device.value()];
    if (bound.valid() && bound != outer_device) fail("splits one template device over two devices");
    bound = outer_device;
    if (!(inner.device_spec(inner_device) == graph_.device_spec(outer_device))) {
      fail("device '" + graph_.device(outer_device).name + "' is not a '" + inner.device_spec(inner_device).name +
           "' as the template's is");
    }
  }
  auto check_port = [&](TensorId inner_tensor, TensorId outer_tensor, const char* what) {
    check_tensor(outer_tensor, "add_composite");
    if ((inner.tensor_kind(inner_tensor) == TensorKind::bundle) !=
        (graph_.tensor_kind(outer_tensor) == TensorKind::bundle)) {
      fail(std::string(what) + " tensor '" + std::string(graph_.tensor_name(outer_tensor)) +
           "' and the template's port must both be bundles or neither");
    }
    const DeviceId inner_device = inner.tensor_device(inner_tensor);
    if (device_of[inner_device.value()] != graph_.tensor_device(outer_tensor)) {
      fail(std::string(what) + " tensor '" + std::string(graph_.tensor_name(outer_tensor)) +
           "' is not on the device the template's port is bound to");
    }
    if (inner.tensor_bytes(inner_tensor) != graph_.tensor_bytes(outer_tensor)) {
      fail(std::string(what) + " tensor '" + std::string(graph_.tensor_name(outer_tensor)) + "' has " +
           std::to_string(graph_.tensor_bytes(outer_tensor)) + " bytes, the template's port " +
           std::to_string(inner.tensor_bytes(inner_tensor)));
    }
  };
  if (inputs.size() != subgraph.inputs().size() || outputs.size() != subgraph.outputs().size()) {
    fail("binds " + std::to_string(inputs.size()) + " inputs and " + std::to_string(outputs.size()) +
         " outputs, the template has " + std::to_string(subgraph.inputs().size()) + " and " +
         std::to_string(subgraph.outputs().size()));
  }
  checked.streams.assign(streams.begin(), streams.end());
  if (!weak_inputs.empty() && weak_inputs.size() != inputs.size()) fail("needs one weak flag per input");
  for (std::size_t i = 0; i < inputs.size(); ++i) check_port(subgraph.inputs()[i], inputs[i], "input");
  for (std::size_t i = 0; i < outputs.size(); ++i) check_port(subgraph.outputs()[i], outputs[i], "output");

  next_id<CompositeId>(graph_.composites_.size());  // throws past the id space
  const auto id = next_id<OpId>(graph_.ops_.size());
  const CompositeId composite = graph_.append_composite(id, subgraph_id, streams);

  // A composite's own work record is never costed: the engine times it by its template.
  if (!composite_work_.valid()) {
    OpWork composite_work;
    composite_work.op_class = OpClass::other;
    composite_work_ = intern_work(composite_work);
  }
  graph_.ops_.push_back({composite_work_, streams.front(), CollectiveId::none(), OpId::none(), 0, intern_name(name)});
  if (graph_.op_composite_.size() + 1 < graph_.ops_.size()) graph_.op_composite_.resize(graph_.ops_.size() - 1);
  graph_.op_composite_.push_back(composite);
  for (StreamId stream : streams) issue_on_stream(id, stream);
  // Ports checked above; a composite may read and write bundles.
  for (std::size_t i = 0; i < inputs.size(); ++i) record_input(id, inputs[i], !weak_inputs.empty() && weak_inputs[i]);
  for (TensorId output : outputs) record_output(id, output);
  return id;
}

void GraphBuilder::add_signal_edge(OpId composite, std::uint32_t signal, OpId successor) {
  check_op(composite, "add_signal_edge");
  check_op(successor, "add_signal_edge");
  const CompositeId id = graph_.op_composite(composite);
  if (!id.valid()) throw InputError("add_signal_edge: op '" + graph_.display_name(composite) + "' is not a composite");
  if (signal >= graph_.subgraph(graph_.composite(id).subgraph).signals().size()) {
    throw InputError("add_signal_edge: composite '" + graph_.display_name(composite) + "' has no signal " +
                     std::to_string(signal));
  }
  if (composite == successor) throw InputError("op '" + graph_.display_name(composite) + "' depends on itself");
  signal_edges_.emplace_back(id, std::make_pair(signal, successor));
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

void GraphBuilder::add_input(OpId op, TensorId tensor, bool weak) {
  check_op(op, "add_input");
  check_tensor(tensor, "add_input");
  check_not_bundle(op, tensor);
  record_input(op, tensor, weak);
}

void GraphBuilder::record_input(OpId op, TensorId tensor, bool weak) {
  if (graph_.tensor_producer(tensor) == op) {
    throw InputError("op '" + graph_.display_name(op) + "' consumes its own output '" +
                     std::string(graph_.tensor_name(tensor)) + "'");
  }
  inputs_.emplace_back(op, tensor);
  input_weak_.push_back(weak ? 1 : 0);
}

void GraphBuilder::add_output(OpId op, TensorId tensor) {
  check_op(op, "add_output");
  check_tensor(tensor, "add_output");
  check_not_bundle(op, tensor);
  record_output(op, tensor);
}

void GraphBuilder::record_output(OpId op, TensorId tensor) {
  OpId& producer = graph_.tensors_[tensor.value()].producer;
  if (producer.valid()) {
    throw InputError("tensor '" + std::string(graph_.tensor_name(tensor)) + "' has two producers: '" +
                     graph_.display_name(producer) + "' and '" + graph_.display_name(op) + "'");
  }
  producer = op;
  outputs_.emplace_back(op, tensor);
}

void GraphBuilder::check_not_bundle(OpId op, TensorId tensor) const {
  if (graph_.tensor_kind(tensor) != TensorKind::bundle || graph_.is_composite(op)) return;
  throw InputError("op '" + graph_.display_name(op) + "' is not a composite and cannot read or write bundle '" +
                   std::string(graph_.tensor_name(tensor)) + "'");
}

// A bundle goes from the composite that produces it to at most one composite that reads it, and
// both of their templates must agree on its members, one by one.
void GraphBuilder::check_bundles() const {
  // Pairs of (template, port) already found to agree: a template is instantiated many times.
  std::set<std::pair<std::pair<const Subgraph*, TensorId>, std::pair<const Subgraph*, TensorId>>> agreeing;
  for (std::size_t t = 0; t < graph_.tensor_count(); ++t) {
    const TensorId tensor(static_cast<TensorId::value_type>(t));
    if (graph_.tensor_kind(tensor) != TensorKind::bundle) continue;
    const auto readers = graph_.tensor_consumers(tensor);
    if (readers.empty()) continue;
    auto name = [&] { return "bundle '" + std::string(graph_.tensor_name(tensor)) + "'"; };
    if (readers.size() > 1) throw InputError(name() + " is read by more than one composite");
    const OpId producer = graph_.tensor_producer(tensor);
    if (!producer.valid()) throw InputError(name() + " is read but no composite produces it");
    auto port_of = [&](OpId op, std::span<const TensorId> bound, bool output) {
      const Subgraph& subgraph = graph_.subgraph(graph_.composite(graph_.op_composite(op)).subgraph);
      const auto port = static_cast<std::size_t>(std::find(bound.begin(), bound.end(), tensor) - bound.begin());
      return std::make_pair(&subgraph, output ? subgraph.outputs()[port] : subgraph.inputs()[port]);
    };
    const auto source = port_of(producer, graph_.op_outputs(producer), true);
    const auto target = port_of(readers.front(), graph_.op_inputs(readers.front()), false);
    if (agreeing.contains({source, target})) continue;
    const Subgraph* from = source.first;
    const Subgraph* to = target.first;
    const auto made = from->bundle_members(source.second);
    const auto read = to->bundle_members(target.second);
    bool same = made.size() == read.size();
    for (std::size_t m = 0; same && m < made.size(); ++m) {
      same = from->graph().tensor_bytes(made[m]) == to->graph().tensor_bytes(read[m]);
    }
    if (!same) {
      throw InputError(name() + ": the members '" + graph_.display_name(producer) + "' produces differ from those '" +
                       graph_.display_name(readers.front()) + "' reads");
    }
    agreeing.insert({source, target});
  }
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
// A workspace is scratch memory of the op that produces it: it needs that op, and no op may read it.
void GraphBuilder::check_workspaces() {
  for (std::size_t i = 0; i < graph_.tensor_count(); ++i) {
    const TensorId tensor(static_cast<TensorId::value_type>(i));
    if (graph_.tensor_kind(tensor) != TensorKind::workspace) continue;
    graph_.has_workspaces_ = true;
    const std::string name(graph_.tensor_name(tensor));
    if (!graph_.tensor_producer(tensor).valid()) {
      throw InputError("workspace tensor '" + name + "' has no producer (a workspace lives while its producer runs)");
    }
    if (!graph_.tensor_consumers(tensor).empty()) {
      throw InputError("workspace tensor '" + name + "' is read by op '" +
                       graph_.display_name(graph_.tensor_consumers(tensor).front()) +
                       "' (a workspace is its producer's scratch memory; no op reads it)");
    }
  }
}

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
  if (!graph_.op_composite_.empty()) graph_.op_composite_.resize(op_count, CompositeId::none());
  graph_.op_outputs_ = Csr<OpId, TensorId>::from_pairs(op_count, std::move(outputs_));
  graph_.collective_members_ =
      Csr<CollectiveId, OpId>::from_pairs(graph_.collective_name_.size(), std::move(collective_members_));
  // Data edges (producer -> waiting consumer, one per consumed input) then control edges, by op.
  std::vector<std::pair<OpId, OpId>> successors;
  successors.reserve(inputs_.size() + control_edges_.size());
  for (std::size_t i = 0; i < inputs_.size(); ++i) {
    const auto& [op, tensor] = inputs_[i];
    const OpId producer = graph_.tensor_producer(tensor);
    if (producer == op) {
      throw InputError("op '" + graph_.display_name(op) + "' consumes its own output '" +
                       std::string(graph_.tensor_name(tensor)) + "'");
    }
    if (producer.valid() && input_weak_[i] == 0) successors.emplace_back(producer, op);
  }
  {
    std::vector<std::pair<CompositeId, OpId>> composite_control;
    for (const auto& [before, after] : control_edges_) {
      const CompositeId composite = graph_.op_composite(before);
      if (composite.valid()) composite_control.emplace_back(composite, after);
    }
    graph_.composite_control_ =
        Csr<CompositeId, OpId>::from_pairs(graph_.composites_.size(), std::move(composite_control));
    std::vector<std::pair<CompositeId, std::pair<OpId, std::int32_t>>> gates;
    for (const auto& [before, after] : control_edges_) {
      if (const CompositeId composite = graph_.op_composite(after); composite.valid()) {
        gates.emplace_back(composite, std::make_pair(before, -1));
      }
    }
    for (const auto& [source, edge] : signal_edges_) {
      if (const CompositeId composite = graph_.op_composite(edge.second); composite.valid()) {
        gates.emplace_back(
            composite, std::make_pair(graph_.composites_[source.value()].op, static_cast<std::int32_t>(edge.first)));
      }
    }
    graph_.composite_gates_ =
        Csr<CompositeId, std::pair<OpId, std::int32_t>>::from_pairs(graph_.composites_.size(), std::move(gates));
    graph_.signal_successors_ = Csr<CompositeId, std::pair<std::uint32_t, OpId>>::from_pairs(graph_.composites_.size(),
                                                                                             std::move(signal_edges_));
  }
  successors.insert(successors.end(), control_edges_.begin(), control_edges_.end());
  graph_.control_successors_ = Csr<OpId, OpId>::from_pairs(op_count, std::move(control_edges_));
  // Within one op, successors keep the order their edges were added: data edges, then control.
  graph_.successors_ = Csr<OpId, OpId>::from_pairs(op_count, std::move(successors));
  {
    std::vector<std::pair<TensorId, OpId>> consumers;
    consumers.reserve(inputs_.size());
    for (const auto& [op, tensor] : inputs_) consumers.emplace_back(tensor, op);
    graph_.tensor_consumers_ = Csr<TensorId, OpId>::from_pairs(graph_.tensor_count(), std::move(consumers), input_weak_,
                                                               graph_.tensor_consumer_weak_);
  }
  graph_.op_inputs_ = Csr<OpId, TensorId>::from_pairs(op_count, std::move(inputs_), input_weak_, graph_.op_input_weak_);
  graph_.has_weak_inputs_ =
      std::find(graph_.op_input_weak_.begin(), graph_.op_input_weak_.end(), 1) != graph_.op_input_weak_.end();
  check_workspaces();
  std::vector<std::uint8_t>().swap(input_weak_);
  compute_dependency_counts();
  if (!bundles_checked_) check_bundles();
  check_acyclic();
  graph_.names_.freeze();
  work_index_ = {};
  return std::move(graph_);
}

}  // namespace weft
