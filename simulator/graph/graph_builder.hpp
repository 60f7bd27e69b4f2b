#pragma once

#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "simulator/graph/graph.hpp"

namespace weft {

// Builds a Graph. Calls that name an unknown id or break a local rule (a second producer, a
// self-edge, a tensor on a link) throw InputError at once; build() then checks the graph as a
// whole: every op must be able to run, so a cycle through data, control, stream-order or
// collective dependencies is an error naming the ops on it.
//
// Ops are issued on their stream in the order they are added; a composite op is issued on every
// stream its template runs on, in the order it is added.
class GraphBuilder {
 public:
  DeviceSpecId add_device_spec(DeviceSpec spec);
  // The device's memory capacity is its spec's, unless set_memory_capacity changes it.
  DeviceId add_device(std::string name, DeviceSpecId spec);
  void set_memory_capacity(DeviceId device, Bytes capacity);
  StreamId add_stream(DeviceId device, std::string name, StreamPolicy policy = StreamPolicy::in_order,
                      bool host_issued = false);
  // Adds `graph`'s device specs, devices (with their memory capacities) and streams, under the
  // same ids, to a builder that has none yet: for rewriting a graph's ops (flatten, op grouping).
  void copy_platform(const Graph& graph);

  WorkId intern_work(const OpWork& work);
  const OpWork& work(WorkId id) const { return graph_.work(id); }
  // Names interned once can be given to many ops (the peers of a replicated stage).
  NameId intern_name(std::string_view name) { return name.empty() ? NameId::none() : graph_.names_.intern(name); }
  TensorId add_tensor(std::string_view name, DeviceId device, TensorKind kind, Bytes bytes);
  OpId add_op(std::string_view name, WorkId work, StreamId stream) { return add_op(intern_name(name), work, stream); }
  OpId add_op(NameId name, WorkId work, StreamId stream);

  // `weak`: the op reads the tensor without waiting for its producer, because the caller knows it
  // is ready by then (it is still kept alive until the op ends). The engine checks this.
  void add_input(OpId op, TensorId tensor, bool weak = false);
  void add_output(OpId op, TensorId tensor);
  void add_control_edge(OpId before, OpId after);
  // Members are ops of one collective class on distinct devices' in_order streams.
  CollectiveId add_collective(std::string_view name, std::span<const OpId> members);

  SubgraphId add_subgraph(std::shared_ptr<const Subgraph> subgraph);
  // An instance of `subgraph`: its streams run on `streams` (in template stream order; the first
  // is the op's own), its input ports read `inputs` (weak where `weak_inputs` says so) and its
  // output ports produce `outputs`. Devices must match the template's device specs.
  OpId add_composite(std::string_view name, SubgraphId subgraph, std::span<const StreamId> streams,
                     std::span<const TensorId> inputs, std::span<const TensorId> outputs,
                     std::span<const std::uint8_t> weak_inputs = {});
  // `successor` waits for signal port `signal` of `composite` instead of its end.
  void add_signal_edge(OpId composite, std::uint32_t signal, OpId successor);

  std::size_t op_count() const { return graph_.ops_.size(); }
  DeviceId op_device(OpId op) const {
    check_op(op, "op_device");
    return graph_.op_device(op);
  }
  const StreamInfo& stream(StreamId stream) const { return graph_.stream(stream); }
  std::size_t tensor_count() const { return graph_.tensors_.size(); }
  const TensorRecord& tensor(TensorId tensor) const {
    check_tensor(tensor, "tensor");
    return graph_.tensor(tensor);
  }

  Graph build() &&;

  // `graph` with its ops renumbered: new op i is `sequence[i]`, `op_of` the inverse (per op of
  // `graph`, its new id), composites numbered in their ops' new order, and `edges` (before, after;
  // new ids) added as control edges. Each stream issues its ops in their new order. Only what a
  // new order can break is checked again (dependency cycles, edges), not the ops themselves: the
  // caller passes a permutation of a built graph (see reissue()).
  static Graph renumbered(const Graph& graph, std::span<const OpId> sequence, std::span<const OpId> op_of,
                          std::span<const std::pair<OpId, OpId>> edges);

 private:
  void check_op(OpId op, const char* where) const;
  void check_tensor(TensorId tensor, const char* where) const;
  void check_collective_member(OpId member, OpId first) const;
  void check_not_bundle(OpId op, TensorId tensor) const;
  // add_input and add_output once their arguments are checked (add_composite checks its ports).
  void record_input(OpId op, TensorId tensor, bool weak);
  void record_output(OpId op, TensorId tensor);
  void check_bundles() const;
  void check_workspaces();
  // Collective members start together: for cycle checks they are one node, named by the first.
  OpId collective_representative(OpId op) const;
  void compute_dependency_counts();
  void check_acyclic() const;
  // Appends `op` to the issue order of `stream` (as its own stream or as one a composite binds).
  void issue_on_stream(OpId op, StreamId stream);
  void link_stream_successor(OpId previous, StreamId stream, OpId next);
  [[noreturn]] void report_cycle(const std::vector<std::uint32_t>& remaining_in_degree) const;

  Graph graph_;
  std::unordered_map<OpWork, WorkId, OpWorkHash> work_index_;
  std::vector<OpId> last_in_stream_;
  std::vector<std::pair<OpId, TensorId>> inputs_;
  std::vector<std::uint8_t> input_weak_;  // parallel to inputs_
  std::vector<std::pair<OpId, TensorId>> outputs_;
  std::vector<std::pair<OpId, OpId>> control_edges_;
  std::vector<std::pair<CollectiveId, OpId>> collective_members_;
  bool bundles_checked_ = false;  // true for a renumbered graph: its bundles passed when it was built
  std::vector<std::pair<CompositeId, std::pair<std::uint32_t, OpId>>> signal_edges_;
  WorkId composite_work_ = WorkId::none();
  // Per template, the last binding of its streams add_composite checked (empty: none yet), and its
  // template devices' outer devices: a builder instantiates a stage's passes one after another.
  struct CheckedBinding {
    std::vector<StreamId> streams;
    std::vector<DeviceId> device_of;
  };
  std::vector<CheckedBinding> checked_bindings_;  // by subgraph
};

}  // namespace weft
