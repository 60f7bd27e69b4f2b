#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "cost_models/device_spec.hpp"
#include "simulator/core/ids.hpp"
#include "simulator/core/op_work.hpp"
#include "simulator/core/tensor_kind.hpp"
#include "simulator/core/units.hpp"
#include "simulator/graph/csr.hpp"
#include "simulator/graph/string_pool.hpp"

namespace weft {

// How a stream picks its next op. `in_order` is a CUDA stream: ops run in issue order, each after
// the previous one. `first_ready` is a shared link: whichever op is ready first goes first (ties
// by op id), one at a time.
enum class StreamPolicy : std::uint8_t { in_order, first_ready };

inline constexpr EnumNames<StreamPolicy, 2> kStreamPolicyNames({"in_order", "first_ready"});

struct DeviceInfo {
  std::string name;
  DeviceSpecId spec;
  Bytes memory_capacity = 0;  // 0: no limit known, no out-of-memory verdict
};

struct StreamInfo {
  std::string name;
  DeviceId device;
  StreamPolicy policy = StreamPolicy::in_order;
  // Its ops are launched one by one by a host thread (a framework's, on the device's rank), so
  // none starts before the host has issued it and those before it (docs/host-issue.md).
  bool host_issued = false;
};

// What the engine reads of an op on every visit, kept together so that one cache line serves.
struct OpRecord {
  WorkId work;
  StreamId stream;
  CollectiveId collective;
  OpId next_in_stream;  // the next op issued on the same in_order stream, or none
  // Completions the op waits for: producers of its inputs (one per input), control
  // predecessors, and the previous op of an in_order stream.
  std::uint32_t dependency_count = 0;
  NameId name;
};

struct TensorRecord {
  Bytes bytes = 0;
  DeviceId device;
  OpId producer;
  NameId name;
  TensorKind kind = TensorKind::activation;
};

class Subgraph;

// Where a composite op's template runs: its template streams bound to outer streams (the first
// is the composite's own stream), and the next op on each of those streams after it.
struct CompositeRecord {
  OpId op;  // the composite op
  SubgraphId subgraph;
  std::uint32_t binding_begin = 0;  // into the graph's composite stream bindings
  std::uint32_t binding_count = 0;
};

// One training iteration (or any workload) as operator nodes and tensor nodes. Immutable once
// built by GraphBuilder, which validates it; stored as arrays indexed by id plus CSR adjacency so
// that tens of millions of ops fit in memory.
//
// A composite op stands for a whole subgraph template (Subgraph): its inputs and outputs are the
// template's port tensors bound to tensors of this graph, and the template's streams run on streams
// of this graph. The engine simulates each template once per distinct situation and reuses the
// result for every instance (docs/ARCHITECTURE.md, subgraph reuse).
class Graph {
 public:
  std::size_t op_count() const { return ops_.size(); }
  std::size_t tensor_count() const { return tensors_.size(); }
  std::size_t device_count() const { return devices_.size(); }
  std::size_t stream_count() const { return streams_.size(); }
  std::size_t collective_count() const { return collective_members_.key_count(); }
  std::size_t work_count() const { return works_.size(); }
  std::size_t device_spec_count() const { return specs_.size(); }
  std::size_t composite_count() const { return composites_.size(); }
  // Bindings of template streams to streams, over every composite (CompositeRecord::binding_begin).
  std::size_t composite_binding_count() const { return composite_streams_.size(); }

  // Operators.
  const OpRecord& op(OpId op) const { return ops_[op.value()]; }
  WorkId op_work_id(OpId op) const { return ops_[op.value()].work; }
  const OpWork& op_work(OpId op) const { return works_[op_work_id(op).value()]; }
  StreamId op_stream(OpId op) const { return ops_[op.value()].stream; }
  DeviceId op_device(OpId op) const { return streams_[op_stream(op).value()].device; }
  CollectiveId op_collective(OpId op) const { return ops_[op.value()].collective; }
  // The op's name, or "" when it has none (see display_name).
  std::string_view op_name(OpId op) const { return names_.view(ops_[op.value()].name); }
  std::string display_name(OpId op) const;
  std::span<const TensorId> op_inputs(OpId op) const { return op_inputs_[op]; }
  // Whether the i-th input of `op` is read without waiting for its producer: the caller
  // guaranteed it is ready (memory accounting still keeps the tensor alive until `op` ends).
  bool input_is_weak(OpId op, std::size_t i) const { return op_input_weak_[op_inputs_.offset(op) + i] != 0; }
  std::span<const TensorId> op_outputs(OpId op) const { return op_outputs_[op]; }
  // Whether any op reads an input weakly (the engine then checks those reads).
  bool has_weak_inputs() const { return has_weak_inputs_; }
  // Whether any tensor is a workspace (freed when its producer ends).
  bool has_workspaces() const { return has_workspaces_; }
  std::uint32_t dependency_count(OpId op) const { return ops_[op.value()].dependency_count; }
  OpId next_in_stream(OpId op) const { return ops_[op.value()].next_in_stream; }
  // Consumers of the op's outputs that wait for them (one entry per consumed output) and its
  // control successors.
  std::span<const OpId> data_and_control_successors(OpId op) const { return successors_[op]; }
  std::span<const OpId> control_successors(OpId op) const { return control_successors_[op]; }
  // Calls fn(successor) once per dependency edge leaving `op`, the edges dependency_count
  // counts: waiting consumers of each output, control successors, then the next op on its
  // stream; for a composite also the ops waiting for its signals and the next op on each of its
  // other streams.
  template <class Fn>
  void for_each_successor(OpId op, Fn&& fn) const {
    for (OpId successor : successors_[op]) fn(successor);
    if (OpId next = next_in_stream(op); next.valid()) fn(next);
    if (const CompositeId composite = op_composite(op); composite.valid()) {
      for (const auto& [signal, successor] : signal_successors_[composite]) fn(successor);
      const auto next = composite_next(composite);
      for (std::size_t i = 1; i < next.size(); ++i) {
        if (next[i].valid()) fn(next[i]);
      }
    }
  }

  // Tensors.
  const TensorRecord& tensor(TensorId tensor) const { return tensors_[tensor.value()]; }
  Bytes tensor_bytes(TensorId tensor) const { return tensors_[tensor.value()].bytes; }
  DeviceId tensor_device(TensorId tensor) const { return tensors_[tensor.value()].device; }
  TensorKind tensor_kind(TensorId tensor) const { return tensors_[tensor.value()].kind; }
  std::string_view tensor_name(TensorId tensor) const { return names_.view(tensors_[tensor.value()].name); }
  OpId tensor_producer(TensorId tensor) const { return tensors_[tensor.value()].producer; }
  std::span<const OpId> tensor_consumers(TensorId tensor) const { return tensor_consumers_[tensor]; }
  // Whether the i-th consumer of `tensor` reads it without waiting (see input_is_weak).
  bool consumer_is_weak(TensorId tensor, std::size_t i) const {
    return tensor_consumer_weak_[tensor_consumers_.offset(tensor) + i] != 0;
  }

  // Composites.
  // The composite an op is (an instance of a subgraph template), or none for other ops.
  CompositeId op_composite(OpId op) const {
    return op.value() < op_composite_.size() ? op_composite_[op.value()] : CompositeId::none();
  }
  bool is_composite(OpId op) const { return op_composite(op).valid(); }
  const CompositeRecord& composite(CompositeId composite) const { return composites_[composite.value()]; }
  const Subgraph& subgraph(SubgraphId subgraph) const { return *subgraphs_[subgraph.value()]; }
  // The outer streams the template's streams run on; the first is the composite's own stream.
  std::span<const StreamId> composite_streams(CompositeId composite) const {
    const CompositeRecord& record = composites_[composite.value()];
    return {composite_streams_.data() + record.binding_begin, record.binding_count};
  }
  // The next op issued on each of those streams after the composite (none at the end).
  std::span<const OpId> composite_next(CompositeId composite) const {
    const CompositeRecord& record = composites_[composite.value()];
    return {composite_next_.data() + record.binding_begin, record.binding_count};
  }
  // Ops waiting for one of the composite's signals: (signal port index, successor).
  std::span<const std::pair<std::uint32_t, OpId>> signal_successors(CompositeId composite) const {
    return signal_successors_[composite];
  }
  // The control and signal edges into a composite: (predecessor, its signal port or -1 for its
  // end).
  std::span<const std::pair<OpId, std::int32_t>> composite_gates(CompositeId composite) const {
    return composite_gates_[composite];
  }
  // Ops that wait for the whole composite to end.
  std::span<const OpId> composite_control_successors(CompositeId composite) const {
    return composite_control_[composite];
  }

  // Devices, streams, collectives, interned work.
  const DeviceInfo& device(DeviceId device) const { return devices_[device.value()]; }
  const DeviceSpec& device_spec(DeviceId device) const { return specs_[devices_[device.value()].spec.value()]; }
  const DeviceSpec& spec(DeviceSpecId spec) const { return specs_[spec.value()]; }
  const StreamInfo& stream(StreamId stream) const { return streams_[stream.value()]; }
  std::span<const OpId> collective_members(CollectiveId collective) const { return collective_members_[collective]; }
  std::string_view collective_name(CollectiveId collective) const {
    return names_.view(collective_name_[collective.value()]);
  }
  const OpWork& work(WorkId work) const { return works_[work.value()]; }

  // Approximate heap bytes held by the graph (for benchmarks and capacity checks).
  std::size_t memory_bytes() const;

 private:
  friend class GraphBuilder;

  // Records op `op` as a composite of template `subgraph` bound to `streams`.
  CompositeId append_composite(OpId op, SubgraphId subgraph, std::span<const StreamId> streams);

  std::vector<OpRecord> ops_;
  Csr<OpId, TensorId> op_inputs_;
  std::vector<std::uint8_t> op_input_weak_;  // parallel to op_inputs_' values
  bool has_weak_inputs_ = false;
  bool has_workspaces_ = false;
  Csr<OpId, TensorId> op_outputs_;
  Csr<OpId, OpId> successors_;
  Csr<OpId, OpId> control_successors_;

  std::vector<TensorRecord> tensors_;
  Csr<TensorId, OpId> tensor_consumers_;
  std::vector<std::uint8_t> tensor_consumer_weak_;  // parallel to tensor_consumers_' values

  std::vector<std::shared_ptr<const Subgraph>> subgraphs_;
  std::vector<CompositeRecord> composites_;
  std::vector<CompositeId> op_composite_;  // by op id; empty in graphs without composites
  std::vector<StreamId> composite_streams_;
  std::vector<OpId> composite_next_;
  Csr<CompositeId, std::pair<std::uint32_t, OpId>> signal_successors_;
  Csr<CompositeId, OpId> composite_control_;
  Csr<CompositeId, std::pair<OpId, std::int32_t>> composite_gates_;

  std::vector<OpWork> works_;
  std::vector<DeviceSpec> specs_;
  std::vector<DeviceInfo> devices_;
  std::vector<StreamInfo> streams_;
  Csr<CollectiveId, OpId> collective_members_;
  std::vector<NameId> collective_name_;
  StringPool names_;
};

}  // namespace weft
