#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "simulator/graph/graph.hpp"

namespace weft {

// The streams an op runs on: its own, or for a composite every stream its template binds.
std::span<const StreamId> op_streams(const Graph& graph, OpId op);

// A template of ops that graphs instantiate as composite ops (docs/ARCHITECTURE.md, subgraph reuse): a
// layer's forward pass, a stage's microbatch flow. It is a graph of its own whose boundary is
// made of ports:
//   inputs   tensors it reads that something outside produces (they have no producer inside);
//   outputs  tensors it produces for the outside;
//   signals  ops whose completion outside ops may wait for (a weight gradient that a
//            data-parallel bucket needs, say), or signals of composites inside.
// Every other tensor lives and dies inside. Its streams are bound to outer streams when it is
// instantiated; the first is the composite's own. Templates nest: a template may itself hold
// composite ops.
//
// A port may be a bundle: a port tensor of kind bundle standing for several member tensors (what
// a forward pass saves for its backward pass, say), so that the graph outside carries one tensor
// instead of many. An output bundle's members are produced inside by primitive ops (which other
// ops inside may read); an input bundle's members are produced nowhere inside. A member made or
// read by a composite inside is one of its (non-bundle) ports, so templates of single layers nest
// in templates of whole passes. No member is read weakly. Members hold memory as tensors of the template: an output
// bundle's from their producer's start on, an input bundle's until their last reader inside ends (the engine keeps a
// member alive longer where the producing template still reads it).
class Subgraph {
 public:
  struct Bundle {
    TensorId port;  // an input or output port of kind bundle
    std::vector<TensorId> members;
  };
  // A signal port: when op `op` ends, or, for a composite inside, when its own signal `inner` fires.
  struct Signal {
    Signal(OpId signal_op, std::int32_t inner_signal = -1) : op(signal_op), inner(inner_signal) {}  // an op converts
    OpId op;
    std::int32_t inner = -1;
  };

  Subgraph(std::string name, Graph graph, std::vector<TensorId> inputs, std::vector<TensorId> outputs,
           std::vector<Signal> signals = {}, std::vector<Bundle> bundles = {});

  const std::string& name() const { return name_; }
  const Graph& graph() const { return graph_; }
  const std::vector<TensorId>& inputs() const { return inputs_; }
  const std::vector<TensorId>& outputs() const { return outputs_; }
  const std::vector<Signal>& signals() const { return signals_; }
  // Whether `tensor` is a port; tensors past the template's (an expanded copy's) are not.
  bool is_port(TensorId tensor) const { return tensor.value() < port_.size() && port_[tensor.value()] != 0; }

  // Whether the bytes of port tensor `tensor` count in its device's memory when bound to an
  // outer tensor of the same kind (the template's memory profile assumes so).
  bool port_counts_memory(TensorId tensor) const {
    return !lives_whole_run(graph_.tensor_kind(tensor)) && holds_memory(graph_.tensor_kind(tensor));
  }
  // The members of bundle port `port` (empty for other ports).
  std::span<const TensorId> bundle_members(TensorId port) const;
  // Whether `tensor` is a member of an input bundle: it exists before the template starts, and
  // its memory was counted by the composite that produced it.
  bool is_input_member(TensorId tensor) const {
    return tensor.value() < member_.size() && member_[tensor.value()] == kInputMember;
  }
  // Whether `tensor` is a member of an output bundle: whoever takes the bundle frees it.
  bool is_output_member(TensorId tensor) const {
    return tensor.value() < member_.size() && member_[tensor.value()] == kOutputMember;
  }
  // The input ports that are bundles.
  const std::vector<std::uint32_t>& bundle_inputs() const { return bundle_inputs_; }

  // Whether output port `p` is also read inside (by an op here or in a nested template): its
  // tensor then lives at least until those readers end.
  bool output_read_inside(std::size_t p) const { return output_read_inside_[p] != 0; }

  // Everything the template's schedule and memory profile depend on besides the durations of
  // its ops: streams, edges, collectives, tensor sizes, ports and nested templates.
  std::uint64_t structure_hash() const { return structure_hash_; }

  // The first op issued on each template stream, and, when nothing inside gates it, the input
  // ports it waits for: such an op could start before the composite does, so the engine checks
  // that it would not (otherwise reusing the template's schedule would change the answer). For
  // a composite inside, these are the ports its own first op on that stream waits for.
  struct StreamEntry {
    OpId first_op;
    bool gated_inside = false;
    std::vector<std::uint32_t> input_ports;
    std::vector<std::pair<std::uint32_t, std::uint32_t>> input_members;  // (bundle input port, member)
  };
  const std::vector<StreamEntry>& stream_entries() const { return stream_entries_; }

 private:
  std::uint64_t compute_structure_hash() const;
  void compute_stream_entries();
  void check_bundles();
  const Bundle* find_bundle(TensorId port) const;

  std::string name_;
  Graph graph_;
  std::vector<TensorId> inputs_;
  std::vector<TensorId> outputs_;
  std::vector<Signal> signals_;
  std::vector<Bundle> bundles_;
  std::vector<std::uint8_t> port_;  // by tensor id
  static constexpr std::uint8_t kOutputMember = 1;
  static constexpr std::uint8_t kInputMember = 2;
  std::vector<std::uint8_t> member_;  // by tensor id: 0, kOutputMember or kInputMember
  std::vector<std::uint32_t> bundle_inputs_;
  std::vector<std::uint8_t> output_read_inside_;
  std::uint64_t structure_hash_ = 0;
  std::vector<StreamEntry> stream_entries_;
};

}  // namespace weft
