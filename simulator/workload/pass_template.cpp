#include "simulator/workload/pass_template.hpp"

#include <algorithm>
#include <stdexcept>

#include <boost/container/small_vector.hpp>

namespace weft {

TensorId BundleMemberHandles::handle(std::uint32_t key, std::uint32_t peer) {
  const Member member{key, peer};
  if (auto it = index_.find(member); it != index_.end()) return it->second;
  if (members_.size() >= kHandleBit) throw std::logic_error("too many bundle member handles");
  const TensorId handle(static_cast<TensorId::value_type>(kHandleBit | members_.size()));
  members_.push_back(member);
  index_.emplace(member, handle);
  return handle;
}

OpId PassTemplate::instantiate(GraphBuilder& outer, std::string_view name, const PassValues& values,
                               PassValues& escaping, PassValues& bundle_tensors, const Placement& placement) const {
  // On the stack for the usual few ports: a plan instantiates thousands of passes.
  boost::container::small_vector<TensorId, 16> in;
  in.reserve(inputs.size());
  for (const auto& [value, peer] : inputs) in.push_back(values[value][peer]);
  boost::container::small_vector<TensorId, 16> out;
  out.reserve(outputs.size());
  for (std::size_t k = 0; k < outputs.size(); ++k) {
    const DeviceId device = placement.output_devices.empty() ? outputs[k].device : placement.output_devices[k];
    out.push_back(outer.add_tensor({}, device, outputs[k].kind, outputs[k].bytes));
  }
  const OpId op = outer.add_composite(name, subgraph, placement.streams, std::span(in.data(), in.size()),
                                      std::span(out.data(), out.size()));
  escaping.assign(escapes.size(), {});
  for (std::size_t v = 0; v < escapes.size(); ++v) {
    for (const Source& source : escapes[v]) {
      escaping[v].push_back(source.from_output ? out[source.index] : values[source.index][source.peer]);
    }
  }
  bundle_tensors.assign(bundles.size(), {});
  for (std::size_t b = 0; b < bundles.size(); ++b) {
    for (std::uint32_t port : bundles[b].port) bundle_tensors[b].push_back(out[port]);
  }
  return op;
}

PassRecorder::PassRecorder(std::string name, std::span<const DeviceSpec> peer_specs,
                           std::vector<DeviceId> outer_devices, const GraphBuilder& outer,
                           const BundleMemberHandles& handles, GroupTemplates* layers)
    : name_(std::move(name)),
      outer_(outer),
      handles_(handles),
      outer_devices_(std::move(outer_devices)),
      layers_(layers) {
  std::vector<std::pair<const DeviceSpec*, DeviceSpecId>> specs;
  for (std::size_t peer = 0; peer < outer_devices_.size(); ++peer) {
    const DeviceSpec& wanted = peer_specs[peer];
    auto known = std::find_if(specs.begin(), specs.end(), [&](const auto& s) { return *s.first == wanted; });
    if (known == specs.end()) known = specs.insert(specs.end(), {&wanted, builder_.add_device_spec(wanted)});
    devices_.push_back(builder_.add_device("peer " + std::to_string(peer), known->second));
  }
}

StreamId PassRecorder::stream(StreamId outer, std::size_t peer, std::string_view name) {
  if (auto it = stream_of_.find(outer); it != stream_of_.end()) return it->second;
  const StreamId stream =
      builder_.add_stream(devices_[peer], std::string(name), StreamPolicy::in_order, outer_.stream(outer).host_issued);
  bindings_.push_back(outer);
  stream_of_.emplace(outer, stream);
  return stream;
}

TensorId PassRecorder::read(TensorId handle) {
  TensorId inner;
  if (is_tagged(handle)) {
    inner = untag(handle);
  } else if (BundleMemberHandles::is_handle(handle)) {
    const BundleMemberHandles::Member& member = handles_.member(handle);
    auto bundle = std::find_if(taken_.begin(), taken_.end(), [&](const TakenBundle& b) {
      return member.peer < b.members.size() && b.members[member.peer].contains(member.key);
    });
    if (bundle == taken_.end())
      throw std::logic_error("pass '" + name_ + "' reads a member of a bundle it does not take");
    inner = bundle->members[member.peer].at(member.key);
  } else if (auto it = imported_.find(handle); it != imported_.end()) {
    inner = it->second;
  } else {
    const TensorRecord& record = outer_.tensor(handle);
    const auto peer = static_cast<std::size_t>(std::find(outer_devices_.begin(), outer_devices_.end(), record.device) -
                                               outer_devices_.begin());
    if (peer == outer_devices_.size()) throw std::logic_error("pass '" + name_ + "' reads a tensor of another stage");
    inner = builder_.add_tensor({}, devices_[peer], record.kind, record.bytes);
    imported_.emplace(handle, inner);
  }
  mark(inner, kRead);
  return inner;
}

void PassRecorder::take_bundle(const PerPeer<TensorId>& bundle, const PassTemplate::BundleShape& from) {
  TakenBundle& taken = taken_.emplace_back();
  for (std::size_t peer = 0; peer < bundle.size(); ++peer) {
    const TensorRecord& outer = outer_.tensor(bundle[peer]);
    const auto device_peer = static_cast<std::size_t>(
        std::find(outer_devices_.begin(), outer_devices_.end(), outer.device) - outer_devices_.begin());
    const DeviceId device = devices_.at(device_peer);
    const TensorId port = builder_.add_tensor({}, device, TensorKind::bundle, outer.bytes);
    imported_.emplace(bundle[peer], port);
    taken.port.push_back(port);
    auto& by_key = taken.members.emplace_back();
    auto& order = taken.member_order.emplace_back();
    for (const auto& [key, kind, bytes] : from.members.at(peer)) {
      const TensorId member = builder_.add_tensor({}, device, kind, bytes);
      by_key.emplace(key, member);
      order.push_back(member);
    }
  }
}

TensorId PassRecorder::write(TensorId handle) {
  if (!is_tagged(handle)) throw std::logic_error("pass '" + name_ + "' writes a tensor of the outer graph");
  const TensorId inner = untag(handle);
  mark(inner, kWritten);
  return inner;
}

void PassRecorder::add_signal(std::size_t key, std::size_t peer, OpId op) { signals_.push_back({key, {peer, op}}); }

void PassRecorder::begin_group(std::uint32_t label) {
  if (layers_ == nullptr || (!group_starts_.empty() && group_starts_.back().second == label)) return;
  group_starts_.emplace_back(builder_.op_count(), label);
}

PassTemplate PassRecorder::finish(GraphBuilder& outer, const PassValues& values, const PassValues& escapes,
                                  const std::vector<PassBundle>& bundles) && {
  PassTemplate result;
  result.streams = bindings_;
  auto position_of = [&](TensorId tensor) -> std::pair<std::uint32_t, std::uint32_t> {
    for (std::size_t v = 0; v < values.size(); ++v) {
      for (std::size_t peer = 0; peer < values[v].size(); ++peer) {
        if (values[v][peer] == tensor) return {static_cast<std::uint32_t>(v), static_cast<std::uint32_t>(peer)};
      }
    }
    throw std::logic_error("pass '" + name_ + "' reads a tensor that is not among its inputs");
  };
  std::vector<TensorId> input_ports;
  for (const auto& [outer_tensor, inner] : imported_) {
    result.inputs.push_back(position_of(outer_tensor));
    input_ports.push_back(inner);
  }
  std::vector<TensorId> output_ports;
  auto output_port = [&](TensorId inner) {
    const auto it = std::find(output_ports.begin(), output_ports.end(), inner);
    if (it != output_ports.end()) return static_cast<std::uint32_t>(it - output_ports.begin());
    const TensorRecord& record = builder_.tensor(inner);
    const auto peer =
        static_cast<std::size_t>(std::find(devices_.begin(), devices_.end(), record.device) - devices_.begin());
    result.outputs.push_back({outer_devices_[peer], record.kind, record.bytes});
    output_ports.push_back(inner);
    return static_cast<std::uint32_t>(output_ports.size() - 1);
  };
  for (const PerPeer<TensorId>& value : escapes) {
    PerPeer<PassTemplate::Source>& sources = result.escapes.emplace_back();
    for (TensorId handle : value) {
      if (is_tagged(handle)) {
        sources.push_back({true, output_port(untag(handle)), 0});
      } else {
        const auto [input, peer] = position_of(handle);
        sources.push_back({false, input, peer});
      }
    }
  }
  std::vector<Subgraph::Bundle> bundle_ports;
  std::set<TensorId> leaving_in_bundles;
  for (const PassBundle& bundle : bundles) {
    PassTemplate::BundleShape& shape = result.bundles.emplace_back();
    shape.route = bundle.route;
    for (std::size_t peer = 0; peer < bundle.members.size(); ++peer) {
      Subgraph::Bundle& port = bundle_ports.emplace_back();
      auto& members = shape.members.emplace_back();
      Bytes total = 0;
      for (const auto& [key, handle] : bundle.members[peer]) {
        const TensorId inner = untag(handle);
        const TensorRecord& record = builder_.tensor(inner);
        members.emplace_back(key, record.kind, record.bytes);
        port.members.push_back(inner);
        leaving_in_bundles.insert(inner);
        total += record.bytes;
      }
      port.port = builder_.add_tensor({}, devices_[peer], TensorKind::bundle, total);
      result.outputs.push_back({outer_devices_[peer], TensorKind::bundle, total});
      output_ports.push_back(port.port);
      shape.port.push_back(static_cast<std::uint32_t>(output_ports.size() - 1));
    }
  }
  for (const TakenBundle& taken : taken_) {
    for (std::size_t peer = 0; peer < taken.port.size(); ++peer) {
      bundle_ports.push_back({taken.port[peer], taken.member_order[peer]});
    }
  }
  for (std::size_t t = 0; t < use_.size(); ++t) {
    const TensorId inner(static_cast<TensorId::value_type>(t));
    // A workspace is its op's own scratch memory, freed inside when the op ends.
    if (use_[t] == kWritten && builder_.tensor(inner).kind != TensorKind::workspace &&
        !leaving_in_bundles.contains(inner))
      output_port(inner);
  }
  std::vector<Subgraph::Signal> signal_ops;
  for (const auto& [key, entry] : signals_) {
    const auto& [peer, op] = entry;
    const std::size_t signal_key = key;  // structured bindings are not captured by clang 14's lambdas
    auto group = std::find_if(result.signals.begin(), result.signals.end(),
                              [&](const auto& g) { return g.first == signal_key; });
    if (group == result.signals.end()) group = result.signals.insert(result.signals.end(), {key, {}});
    if (group->second.size() <= peer) group->second.resize(peer + 1);
    group->second[peer] = static_cast<std::uint32_t>(signal_ops.size());
    signal_ops.push_back(op);
  }
  TemplateParts parts{std::move(builder_).build(), std::move(input_ports), std::move(output_ports),
                      std::move(signal_ops), std::move(bundle_ports)};
  if (!group_starts_.empty()) {
    std::vector<std::uint32_t> labels(parts.graph.op_count(), kNoGroup);
    for (std::size_t g = 0; g < group_starts_.size(); ++g) {
      const std::size_t end = g + 1 < group_starts_.size() ? group_starts_[g + 1].first : labels.size();
      std::fill(labels.begin() + static_cast<std::ptrdiff_t>(group_starts_[g].first),
                labels.begin() + static_cast<std::ptrdiff_t>(end), group_starts_[g].second);
    }
    parts = wrap_op_groups(parts, labels, *layers_);
  }
  auto subgraph =
      std::make_shared<const Subgraph>(name_, std::move(parts.graph), std::move(parts.inputs), std::move(parts.outputs),
                                       std::move(parts.signals), std::move(parts.bundles));
  result.subgraph = outer.add_subgraph(std::move(subgraph));
  return result;
}

}  // namespace weft
