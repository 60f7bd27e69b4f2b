#pragma once

#include <map>
#include <memory>
#include <set>
#include <span>
#include <string>
#include <tuple>
#include <vector>

#include "simulator/graph/graph_builder.hpp"
#include "simulator/graph/op_grouping.hpp"
#include "simulator/graph/subgraph.hpp"
#include "simulator/workload/per_peer.hpp"

namespace weft {

// The values a pass of a pipeline stage reads or leaves behind, in an order fixed by the kind of
// pass (a forward's input activation; a backward's incoming gradient and the bundle of what its
// forward saved; ...), each a tensor per peer or nothing. Held inline up to four: every pass a
// plan instantiates passes a few of them around.
using PassValues = boost::container::small_vector<PerPeer<TensorId>, 4>;

// What a pass leaves for one other pass in a bundle (subgraph.hpp): per peer, its members, each
// named by a key that the passes agree on (which step saved it, say).
struct PassBundle {
  std::uint32_t route = 0;  // which pass it goes to, from which: the builder's numbering
  PerPeer<std::vector<std::pair<std::uint32_t, TensorId>>> members;  // per peer: (key, tensor)
};

// Handles for the members of bundles, valid in any pass that takes a bundle with the member: a
// pass reads a member through its handle, and the recorder finds the template's tensor standing
// for it. Keys name members uniquely among the bundles a pass takes. Handles are tensor ids with
// bit 30 set, so the graphs being built must stay under 2^30 tensors.
class BundleMemberHandles {
 public:
  TensorId handle(std::uint32_t key, std::uint32_t peer);
  static bool is_handle(TensorId tensor) { return tensor.valid() && (tensor.value() & kTagBits) == kHandleBit; }
  struct Member {
    std::uint32_t key = 0;
    std::uint32_t peer = 0;
    auto operator<=>(const Member&) const = default;
  };
  const Member& member(TensorId handle) const { return members_[handle.value() & ~kTagBits]; }

 private:
  static constexpr TensorId::value_type kTagBits = 0xC000'0000u;
  static constexpr TensorId::value_type kHandleBit = 0x4000'0000u;
  std::vector<Member> members_;
  std::map<Member, TensorId> index_;
};

// A pass (one chunk's forward, backward or weight pass of a microbatch) made once into a subgraph
// template and instantiated as a composite op for every microbatch.
struct PassTemplate {
  // Where an escaping value comes from: an output port, or an input passed through.
  struct Source {
    bool from_output = true;
    std::uint32_t index = 0;  // the output port, or the input value
    std::uint32_t peer = 0;   // for an input: its peer
  };
  struct OutputShape {
    DeviceId device;
    TensorKind kind = TensorKind::activation;
    Bytes bytes = 0;
  };
  // A bundle it leaves: per peer its output port, and its members as a taker must see them.
  struct BundleShape {
    std::uint32_t route = 0;
    PerPeer<std::uint32_t> port;
    PerPeer<std::vector<std::tuple<std::uint32_t, TensorKind, Bytes>>> members;  // (key, kind, bytes)
  };

  SubgraphId subgraph;
  std::vector<StreamId> streams;                                // outer streams, in template order
  std::vector<std::pair<std::uint32_t, std::uint32_t>> inputs;  // per input port: (value, peer)
  std::vector<OutputShape> outputs;                             // per output port
  std::vector<PerPeer<Source>> escapes;                         // per escaping value, per peer
  std::vector<BundleShape> bundles;                             // per escaping bundle
  // Signal ports by the key the pass gave them (a step), per peer.
  std::vector<std::pair<std::size_t, PerPeer<std::uint32_t>>> signals;

  // Where a composite runs: the outer streams bound to the template's, and the device of each
  // output port (none: the devices it was recorded with).
  struct Placement {
    std::span<const StreamId> streams;
    std::span<const DeviceId> output_devices;
  };

  // A composite of the template reading `inputs` (this microbatch's values, in the order the
  // template was recorded with); fills `escapes` with this microbatch's escaping values and
  // `bundles` with its bundles (per escaping bundle, a bundle tensor per peer).
  OpId instantiate(GraphBuilder& outer, std::string_view name, const PassValues& inputs, PassValues& escapes,
                   PassValues& bundles, const Placement& placement) const;
};

// Records a pass into a template. While recording, the pass's ops go to builder() on the
// template's devices; tensors it creates are handed out tagged (see tag()), so that they can be
// told apart from the outer graph's tensors it reads, which become input ports on first use.
class PassRecorder {
 public:
  // With `layers`, the groups of ops begin_group() marks become nested templates shared through
  // it (wrap_op_groups), where that keeps the pass's meaning.
  // `peer_specs`: the device of each peer, as its outer device is.
  PassRecorder(std::string name, std::span<const DeviceSpec> peer_specs, std::vector<DeviceId> outer_devices,
               const GraphBuilder& outer, const BundleMemberHandles& handles, GroupTemplates* layers = nullptr);

  GraphBuilder& builder() { return builder_; }
  DeviceId device(std::size_t peer) const { return devices_[peer]; }
  // The template stream bound to `outer` (of peer `peer`), created on first use.
  StreamId stream(StreamId outer, std::size_t peer, std::string_view name);

  static TensorId tag(TensorId inner) { return TensorId(inner.value() | kTagBit); }
  static bool is_tagged(TensorId handle) { return handle.valid() && (handle.value() & kTagBit) != 0; }
  static TensorId untag(TensorId handle) { return TensorId(handle.value() & ~kTagBit); }
  // The template tensor an op reads: a recorded tensor, a member of a bundle taken, or an input
  // port for an outer one.
  TensorId read(TensorId handle);
  // Takes bundle `bundle` (one bundle tensor per peer, among the pass's inputs), which `from`
  // leaves: its members can then be read through their handles.
  void take_bundle(const PerPeer<TensorId>& bundle, const PassTemplate::BundleShape& from);
  // The template tensor an op writes (one the pass created).
  TensorId write(TensorId handle);
  void add_signal(std::size_t key, std::size_t peer, OpId op);
  // The ops added from now on belong to group `label` (a layer, say; kNoGroup: none).
  void begin_group(std::uint32_t label);

  // Ends recording. `inputs` are the values the pass was recorded with (every outer tensor it
  // read must be among them); `escapes` the values it leaves behind, which become output ports
  // (or pass-throughs of inputs), and `bundles` the bundles it leaves. Tensors made inside and
  // read nowhere become output ports too: they live on, as in the expanded graph.
  PassTemplate finish(GraphBuilder& outer, const PassValues& inputs, const PassValues& escapes,
                      const std::vector<PassBundle>& bundles) &&;

 private:
  static constexpr TensorId::value_type kTagBit = 0x8000'0000u;

  // A bundle taken: per peer, its template port and the members by key.
  struct TakenBundle {
    PerPeer<TensorId> port;
    PerPeer<std::map<std::uint32_t, TensorId>> members;
    PerPeer<std::vector<TensorId>> member_order;
  };

  std::string name_;
  const GraphBuilder& outer_;
  const BundleMemberHandles& handles_;
  std::vector<TakenBundle> taken_;
  GraphBuilder builder_;
  std::vector<DeviceId> outer_devices_;
  std::vector<DeviceId> devices_;
  std::vector<StreamId> bindings_;          // per template stream: the outer stream
  std::map<StreamId, StreamId> stream_of_;  // outer stream -> template stream
  std::map<TensorId, TensorId> imported_;   // outer tensor -> template input port
  // By template tensor: whether an op inside reads it (kRead), writes it (kWritten), or both.
  static constexpr std::uint8_t kRead = 1;
  static constexpr std::uint8_t kWritten = 2;
  std::vector<std::uint8_t> use_;
  void mark(TensorId inner, std::uint8_t use) {
    if (use_.size() <= inner.value()) use_.resize(inner.value() + 1, 0);
    use_[inner.value()] |= use;
  }
  std::vector<std::pair<std::size_t, std::pair<std::size_t, OpId>>> signals_;  // (key, (peer, op))
  GroupTemplates* layers_;
  std::vector<std::pair<std::size_t, std::uint32_t>> group_starts_;  // (first op, label)
};

}  // namespace weft
