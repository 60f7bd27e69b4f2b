#include "simulator/graph/subgraph.hpp"

#include <algorithm>

#include "simulator/core/hash_mix.hpp"
#include "simulator/core/input_error.hpp"

namespace weft {

std::span<const StreamId> op_streams(const Graph& graph, OpId op) {
  if (graph.is_composite(op)) return graph.composite_streams(graph.op_composite(op));
  return {&graph.op(op).stream, 1};
}

Subgraph::Subgraph(std::string name, Graph graph, std::vector<TensorId> inputs, std::vector<TensorId> outputs,
                   std::vector<Signal> signals, std::vector<Bundle> bundles)
    : name_(std::move(name)),
      graph_(std::move(graph)),
      inputs_(std::move(inputs)),
      outputs_(std::move(outputs)),
      signals_(std::move(signals)),
      bundles_(std::move(bundles)),
      port_(graph_.tensor_count(), 0),
      member_(graph_.tensor_count(), 0) {
  auto fail = [&](const std::string& message) { throw InputError("subgraph '" + name_ + "': " + message); };
  auto tensor_name = [&](TensorId tensor) { return std::string(graph_.tensor_name(tensor)); };
  for (TensorId tensor : inputs_) {
    if (!tensor.valid() || tensor.value() >= graph_.tensor_count()) fail("unknown input port tensor");
    if (graph_.tensor_producer(tensor).valid()) fail("input port '" + tensor_name(tensor) + "' has a producer inside");
    if (port_[tensor.value()]++ != 0) fail("a tensor is listed as a port twice");
  }
  for (TensorId tensor : outputs_) {
    if (!tensor.valid() || tensor.value() >= graph_.tensor_count()) fail("unknown output port tensor");
    if (!graph_.tensor_producer(tensor).valid() && graph_.tensor_kind(tensor) != TensorKind::bundle)
      fail("output port '" + tensor_name(tensor) + "' has no producer inside");
    if (port_[tensor.value()]++ != 0) fail("a tensor is listed as a port twice");
  }
  for (const Signal& signal : signals_) {
    if (!signal.op.valid() || signal.op.value() >= graph_.op_count()) fail("unknown signal op");
    if (signal.inner < 0) continue;
    const CompositeId composite = graph_.op_composite(signal.op);
    if (!composite.valid() || static_cast<std::size_t>(signal.inner) >=
                                  graph_.subgraph(graph_.composite(composite).subgraph).signals().size())
      fail("a signal names a signal of an op that has no such signal");
  }
  check_bundles();
  for (TensorId tensor : inputs_) {
    // An unread input would end its tensor's life at the composite's start.
    if (find_bundle(tensor) == nullptr && graph_.tensor_consumers(tensor).empty())
      fail("input port '" + tensor_name(tensor) + "' is not read inside");
  }
  for (std::size_t i = 0; i < graph_.tensor_count(); ++i) {
    const TensorId tensor(static_cast<TensorId::value_type>(i));
    if (port_[i] != 0 || member_[i] != 0) continue;
    const bool workspace = graph_.tensor_kind(tensor) == TensorKind::workspace;  // its producer frees it
    if (!graph_.tensor_producer(tensor).valid() || (graph_.tensor_consumers(tensor).empty() && !workspace)) {
      fail("tensor '" + tensor_name(tensor) + "' is neither a port nor produced and consumed inside");
    }
    if (lives_whole_run(graph_.tensor_kind(tensor))) {
      fail("tensor '" + tensor_name(tensor) + "' lives for the whole run, so it must be a port");
    }
  }
  if (graph_.stream_count() == 0) fail("a subgraph template needs at least one stream");
  std::vector<std::uint8_t> stream_used(graph_.stream_count(), 0);
  for (std::size_t i = 0; i < graph_.op_count(); ++i) {
    const OpId op(static_cast<OpId::value_type>(i));
    for (StreamId stream : op_streams(graph_, op)) stream_used[stream.value()] = 1;
  }
  for (std::size_t s = 0; s < graph_.stream_count(); ++s) {
    const StreamInfo& stream = graph_.stream(StreamId(static_cast<StreamId::value_type>(s)));
    if (stream.policy != StreamPolicy::in_order) {
      fail("stream '" + stream.name + "' is first_ready; templates run on in_order streams only");
    }
    // A composite orders each stream it binds; with nothing on it, that order would be invented.
    if (stream_used[s] == 0) fail("stream '" + stream.name + "' has no ops");
  }
  for (TensorId tensor : outputs_) {
    bool read = !graph_.tensor_consumers(tensor).empty();
    const OpId producer = graph_.tensor_producer(tensor);
    if (!producer.valid()) {  // a bundle
      output_read_inside_.push_back(0);
      continue;
    }
    if (const CompositeId composite = graph_.op_composite(producer); composite.valid()) {
      const auto produced = graph_.op_outputs(producer);
      const auto q = static_cast<std::size_t>(std::find(produced.begin(), produced.end(), tensor) - produced.begin());
      read = read || graph_.subgraph(graph_.composite(composite).subgraph).output_read_inside(q);
    }
    output_read_inside_.push_back(read ? 1 : 0);
  }
  structure_hash_ = compute_structure_hash();
  compute_stream_entries();
}

const Subgraph::Bundle* Subgraph::find_bundle(TensorId port) const {
  if (graph_.tensor_kind(port) != TensorKind::bundle) return nullptr;
  for (const Bundle& bundle : bundles_) {
    if (bundle.port == port) return &bundle;
  }
  return nullptr;
}

std::span<const TensorId> Subgraph::bundle_members(TensorId port) const {
  const Bundle* bundle = find_bundle(port);
  return bundle != nullptr ? std::span<const TensorId>(bundle->members) : std::span<const TensorId>();
}

void Subgraph::check_bundles() {
  auto fail = [&](TensorId tensor, const std::string& message) {
    throw InputError("subgraph '" + name_ + "': bundle '" + std::string(graph_.tensor_name(tensor)) + "' " + message);
  };
  auto is_output = [&](TensorId port) { return std::find(outputs_.begin(), outputs_.end(), port) != outputs_.end(); };
  for (const Bundle& bundle : bundles_) {
    const TensorId port = bundle.port;
    if (!port.valid() || port.value() >= graph_.tensor_count() || port_[port.value()] == 0)
      throw InputError("subgraph '" + name_ + "': a bundle is not a port");
    if (graph_.tensor_kind(port) != TensorKind::bundle) fail(port, "is not a tensor of kind bundle");
    if (graph_.tensor_producer(port).valid() || !graph_.tensor_consumers(port).empty())
      fail(port, "is produced or read inside: its members are");
    const bool output = is_output(port);
    Bytes bytes = 0;
    for (TensorId member : bundle.members) {
      if (!member.valid() || member.value() >= graph_.tensor_count()) fail(port, "has an unknown member");
      if (port_[member.value()] != 0 || member_[member.value()] != 0)
        fail(port, "has a member that is a port, or in another bundle");
      const TensorKind kind = graph_.tensor_kind(member);
      if (!holds_memory(kind) || lives_whole_run(kind)) fail(port, "has a member that is not freed by its readers");
      if (graph_.tensor_device(member) != graph_.tensor_device(port)) fail(port, "has a member on another device");
      member_[member.value()] = output ? kOutputMember : kInputMember;
      bytes += graph_.tensor_bytes(member);
      const OpId producer = graph_.tensor_producer(member);
      const auto readers = graph_.tensor_consumers(member);
      if (output && !producer.valid()) fail(port, "leaves with a member not produced inside");
      if (!output && (producer.valid() || readers.empty())) fail(port, "brings a member produced inside or unread");
      for (std::size_t r = 0; r < readers.size(); ++r) {
        if (graph_.consumer_is_weak(member, r)) fail(port, "has a member read weakly");
      }
    }
    if (bytes != graph_.tensor_bytes(port)) fail(port, "does not have the bytes of its members");
  }
  for (const auto* ports : {&inputs_, &outputs_}) {
    for (TensorId port : *ports) {
      if (graph_.tensor_kind(port) == TensorKind::bundle && find_bundle(port) == nullptr)
        fail(port, "is a port of kind bundle but no bundle");
    }
  }
  for (std::uint32_t p = 0; p < inputs_.size(); ++p) {
    if (graph_.tensor_kind(inputs_[p]) == TensorKind::bundle) bundle_inputs_.push_back(p);
  }
}

void Subgraph::compute_stream_entries() {
  stream_entries_.assign(graph_.stream_count(), {});
  for (std::size_t i = graph_.op_count(); i-- > 0;) {
    const OpId op(static_cast<OpId::value_type>(i));
    for (StreamId stream : op_streams(graph_, op)) stream_entries_[stream.value()].first_op = op;
  }
  std::vector<std::size_t> reads;  // the first op's inputs that its first op on the stream waits for
  for (std::size_t s = 0; s < stream_entries_.size(); ++s) {
    StreamEntry& entry = stream_entries_[s];
    if (!entry.first_op.valid()) continue;
    // Template inputs have no producer, so dependency_count counts only what gates it inside.
    entry.gated_inside = graph_.dependency_count(entry.first_op) > 0;
    const auto inputs = graph_.op_inputs(entry.first_op);
    reads.clear();
    if (const CompositeId composite = graph_.op_composite(entry.first_op); composite.valid()) {
      // A composite's ops read its ports one by one (its expansion): on this stream, what its own
      // first op there waits for.
      const auto bound = graph_.composite_streams(composite);
      const auto j = static_cast<std::size_t>(std::find(bound.begin(), bound.end(), StreamId::at(s)) - bound.begin());
      // Its dependency count also holds the ops before it on its other streams, which do not
      // delay this one: it is gated here by edges into it and by what that op reads.
      const StreamEntry& inner = graph_.subgraph(graph_.composite(composite).subgraph).stream_entries()[j];
      entry.gated_inside =
          inner.gated_inside || !inner.input_members.empty() || !graph_.composite_gates(composite).empty();
      reads.assign(inner.input_ports.begin(), inner.input_ports.end());
      for (std::size_t i : reads) {
        const bool waits = !graph_.input_is_weak(entry.first_op, i) && graph_.tensor_producer(inputs[i]).valid();
        entry.gated_inside = entry.gated_inside || waits;
      }
    } else {
      for (std::size_t i = 0; i < inputs.size(); ++i) reads.push_back(i);
    }
    for (std::size_t i : reads) {
      if (graph_.input_is_weak(entry.first_op, i)) continue;
      for (std::uint32_t port = 0; port < inputs_.size(); ++port) {
        if (inputs_[port] == inputs[i]) entry.input_ports.push_back(port);
        const auto members = bundle_members(inputs_[port]);
        for (std::uint32_t m = 0; m < members.size(); ++m) {
          if (members[m] == inputs[i]) entry.input_members.emplace_back(port, m);
        }
      }
    }
  }
}

std::uint64_t Subgraph::compute_structure_hash() const {
  std::uint64_t h = hash_mix(0, graph_.op_count());
  h = hash_mix(h, graph_.stream_count());
  for (std::size_t s = 0; s < graph_.stream_count(); ++s) {
    const StreamInfo& stream = graph_.stream(StreamId(static_cast<StreamId::value_type>(s)));
    h = hash_mix(h, stream.device.value() * 2 + stream.host_issued);
  }
  for (std::size_t i = 0; i < graph_.op_count(); ++i) {
    const OpId op(static_cast<OpId::value_type>(i));
    const OpRecord& record = graph_.op(op);
    h = hash_mix(h, record.stream.value());
    h = hash_mix(h, record.collective.valid() ? record.collective.value() : ~0ULL);
    h = hash_mix(h, static_cast<std::uint64_t>(category_of(graph_.op_work(op).op_class)));
    const auto inputs = graph_.op_inputs(op);
    for (std::size_t k = 0; k < inputs.size(); ++k)
      h = hash_mix(h, inputs[k].value() * 2 + graph_.input_is_weak(op, k));
    h = hash_mix(h, ~0ULL);
    for (TensorId tensor : graph_.op_outputs(op)) h = hash_mix(h, tensor.value());
    h = hash_mix(h, ~1ULL);
    for (OpId successor : graph_.data_and_control_successors(op)) h = hash_mix(h, successor.value());
    if (const CompositeId composite = graph_.op_composite(op); composite.valid()) {
      h = hash_mix(h, graph_.subgraph(graph_.composite(composite).subgraph).structure_hash());
      for (StreamId stream : graph_.composite_streams(composite)) h = hash_mix(h, stream.value());
    }
  }
  for (std::size_t i = 0; i < graph_.tensor_count(); ++i) {
    const TensorRecord& tensor = graph_.tensor(TensorId(static_cast<TensorId::value_type>(i)));
    h = hash_mix(h, static_cast<std::uint64_t>(tensor.bytes));
    h = hash_mix(h, tensor.device.value());
    h = hash_mix(h, static_cast<std::uint64_t>(tensor.kind));
  }
  for (TensorId tensor : inputs_) h = hash_mix(h, tensor.value());
  h = hash_mix(h, ~2ULL);
  for (TensorId tensor : outputs_) h = hash_mix(h, tensor.value());
  h = hash_mix(h, ~3ULL);
  for (const Signal& signal : signals_) h = hash_mix(hash_mix(h, signal.op.value()), signal.inner + 1ULL);
  for (const Bundle& bundle : bundles_) {
    h = hash_mix(h, bundle.port.value());
    for (TensorId member : bundle.members) h = hash_mix(h, member.value());
  }
  return h;
}

}  // namespace weft
