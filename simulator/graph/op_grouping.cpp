#include "simulator/graph/op_grouping.hpp"

#include <algorithm>
#include <bit>
#include <functional>
#include <stdexcept>
#include <string_view>

#include "simulator/core/hash_mix.hpp"
#include "simulator/graph/graph_builder.hpp"

namespace weft {
namespace {

std::uint64_t hash_text(std::string_view text) { return std::hash<std::string_view>{}(text); }

// The longest prefix of the ops' (non-empty) names that ends with a '.'.
std::string common_prefix(const Graph& graph, std::span<const OpId> ops) {
  std::string_view prefix;
  bool first = true;
  for (OpId op : ops) {
    const std::string_view name = graph.op_name(op);
    if (name.empty()) continue;
    if (first) {
      prefix = name;
      first = false;
      continue;
    }
    const auto mismatch = std::mismatch(prefix.begin(), prefix.end(), name.begin(), name.end());
    prefix = prefix.substr(0, static_cast<std::size_t>(mismatch.first - prefix.begin()));
  }
  const std::size_t dot = prefix.rfind('.');
  return dot == std::string_view::npos ? std::string() : std::string(prefix.substr(0, dot + 1));
}

std::string_view without(std::string_view name, std::string_view prefix) {
  return name.starts_with(prefix) ? name.substr(prefix.size()) : name;
}

// One group of ops being wrapped: its template and how its composite binds it.
struct Wrapped {
  std::shared_ptr<const Subgraph> subgraph;
  std::string name;
  std::vector<StreamId> streams;  // of the graph, in template stream order
  std::vector<TensorId> inputs;   // of the graph, in port order
  std::vector<TensorId> outputs;
  std::vector<std::uint8_t> weak_inputs;
  std::vector<std::uint32_t> signals;  // the signals of the parts it holds, in its signal order
};

class GroupWrapper {
 public:
  GroupWrapper(const TemplateParts& parts, std::span<const std::uint32_t> group_of_op, GroupTemplates& templates)
      : parts_(parts), graph_(parts.graph), templates_(templates) {
    if (graph_.composite_count() > 0) throw std::logic_error("wrap_op_groups: the graph has composites");
    collect_groups(group_of_op);
    check_edges_and_collectives();
    find_predecessors();
    for (std::size_t g = 0; g < groups_.size(); ++g) {
      if (ok_[g]) check_streams_and_devices(g);
      if (ok_[g]) check_convex(g);
    }
    drop_groups_on_cycles();
    op_group_.assign(graph_.op_count(), kNoGroup);
    for (std::size_t g = 0; g < groups_.size(); ++g) {
      if (!ok_[g]) continue;
      for (OpId op : groups_[g]) op_group_[op.value()] = static_cast<std::uint32_t>(g);
    }
    collectives_.resize(groups_.size());
    for (std::size_t c = 0; c < graph_.collective_count(); ++c) {
      const std::uint32_t g = op_group_[graph_.collective_members(CollectiveId::at(c)).front().value()];
      if (g != kNoGroup) collectives_[g].push_back(CollectiveId::at(c));
    }
    classify_tensors();
  }

  TemplateParts run() {
    wrapped_.resize(groups_.size());
    for (std::size_t g = 0; g < groups_.size(); ++g) {
      if (ok_[g]) wrap(g);
    }
    return build_outer();
  }

 private:
  void collect_groups(std::span<const std::uint32_t> group_of_op) {
    std::unordered_map<std::uint32_t, std::uint32_t> index;
    initial_group_.assign(graph_.op_count(), kNoGroup);
    for (std::size_t i = 0; i < graph_.op_count() && i < group_of_op.size(); ++i) {
      if (group_of_op[i] == kNoGroup) continue;
      const auto [it, made] = index.try_emplace(group_of_op[i], static_cast<std::uint32_t>(groups_.size()));
      if (made) groups_.emplace_back();
      groups_[it->second].push_back(OpId::at(i));
      initial_group_[i] = it->second;
    }
    ok_.assign(groups_.size(), 1);
    for (std::size_t g = 0; g < groups_.size(); ++g) ok_[g] = groups_[g].size() >= 2 ? 1 : 0;
  }

  void drop(std::uint32_t group) {
    if (group != kNoGroup) ok_[group] = 0;
  }

  void check_edges_and_collectives() {
    for (std::size_t i = 0; i < graph_.op_count(); ++i) {
      for (OpId successor : graph_.control_successors(OpId::at(i))) {
        if (initial_group_[i] == initial_group_[successor.value()]) continue;
        drop(initial_group_[i]);
        drop(initial_group_[successor.value()]);
      }
    }
    for (std::size_t c = 0; c < graph_.collective_count(); ++c) {
      const auto members = graph_.collective_members(CollectiveId::at(c));
      const std::uint32_t first = initial_group_[members.front().value()];
      const bool split = std::any_of(members.begin(), members.end(),
                                     [&](OpId member) { return initial_group_[member.value()] != first; });
      if (!split) continue;
      for (OpId member : members) drop(initial_group_[member.value()]);
    }
  }

  void check_streams_and_devices(std::size_t g) {
    const std::vector<OpId>& ops = groups_[g];
    std::vector<std::pair<StreamId, OpId>> last_on;  // per stream of the group: its last op there
    std::vector<DeviceId> devices;
    for (OpId op : ops) {
      const StreamId stream = graph_.op_stream(op);
      if (graph_.stream(stream).policy != StreamPolicy::in_order) {
        ok_[g] = 0;
        return;
      }
      auto it = std::find_if(last_on.begin(), last_on.end(), [&](const auto& s) { return s.first == stream; });
      if (it == last_on.end()) {
        last_on.emplace_back(stream, op);
        devices.push_back(graph_.stream(stream).device);
      } else {
        it->second = op;
      }
    }
    // Nothing else may be issued on its streams between its first op and its last op there: its
    // composite is issued at its first op.
    for (std::size_t i = ops.front().value() + 1; i < ops.back().value(); ++i) {
      if (initial_group_[i] == g) continue;
      const StreamId stream = graph_.op_stream(OpId::at(i));
      for (const auto& [s, last] : last_on) {
        if (s == stream && i < last.value()) {
          ok_[g] = 0;
          return;
        }
      }
    }
    auto on_its_devices = [&](std::span<const TensorId> tensors) {
      return std::all_of(tensors.begin(), tensors.end(), [&](TensorId t) {
        return std::find(devices.begin(), devices.end(), graph_.tensor_device(t)) != devices.end();
      });
    };
    for (OpId op : ops) {
      if (!on_its_devices(graph_.op_inputs(op)) || !on_its_devices(graph_.op_outputs(op))) {
        ok_[g] = 0;
        return;
      }
    }
  }

  // Every op's dependencies: the producers of its inputs, its control predecessors and the op
  // before it on its in_order stream. Groups are checked for convexity in id order, which must
  // then be a topological order; in a graph where it is not, nothing is wrapped.
  void find_predecessors() {
    std::vector<std::vector<OpId>> control(graph_.op_count());
    for (std::size_t i = 0; i < graph_.op_count(); ++i) {
      for (OpId successor : graph_.control_successors(OpId::at(i))) control[successor.value()].push_back(OpId::at(i));
    }
    std::vector<OpId> last_on_stream(graph_.stream_count(), OpId::none());
    predecessors_.resize(graph_.op_count());
    for (std::size_t i = 0; i < graph_.op_count(); ++i) {
      const OpId op = OpId::at(i);
      std::vector<OpId>& before = predecessors_[i];
      for (TensorId input : graph_.op_inputs(op)) {
        if (graph_.tensor_producer(input).valid()) before.push_back(graph_.tensor_producer(input));
      }
      before.insert(before.end(), control[i].begin(), control[i].end());
      const StreamId stream = graph_.op_stream(op);
      if (graph_.stream(stream).policy == StreamPolicy::in_order) {
        if (last_on_stream[stream.value()].valid()) before.push_back(last_on_stream[stream.value()]);
        last_on_stream[stream.value()] = op;
      }
      if (std::any_of(before.begin(), before.end(), [&](OpId p) { return p.value() >= i; })) ok_.assign(ok_.size(), 0);
    }
  }

  // A composite waits for all its inputs before any of its ops starts, so no path may leave the
  // group and come back: no op outside it that depends on it may be depended on by it. Such an
  // op lies between its first and last ops (id order is topological); collective members there,
  // which start together with their peers, are refused outright.
  void check_convex(std::size_t g) {
    const std::vector<OpId>& ops = groups_[g];
    const std::size_t first = ops.front().value();
    std::vector<std::uint8_t> reached(ops.back().value() - first + 1, 0);  // outside ops depending on the group
    auto depends_on_group = [&](OpId p) {
      return p.value() >= first && (initial_group_[p.value()] == g || reached[p.value() - first] != 0);
    };
    for (std::size_t i = first + 1; i <= ops.back().value(); ++i) {
      const auto& before = predecessors_[i];
      if (initial_group_[i] == g) {
        const bool reenters = std::any_of(before.begin(), before.end(), [&](OpId p) {
          return p.value() >= first && initial_group_[p.value()] != g && reached[p.value() - first] != 0;
        });
        if (reenters) {
          ok_[g] = 0;
          return;
        }
        continue;
      }
      if (graph_.op_collective(OpId::at(i)).valid()) {
        ok_[g] = 0;
        return;
      }
      reached[i - first] = std::any_of(before.begin(), before.end(), depends_on_group) ? 1 : 0;
    }
  }

  // Groups that are each convex may still wait for each other (g's second op reads what h's
  // first makes, and h's second what g's first makes), or, through a collective whose members
  // lie before and after a group, on themselves. The graph of wrapped groups and other ops, with
  // a collective's members as one node, must stay acyclic: groups on a cycle or behind one are
  // dropped until it is.
  void drop_groups_on_cycles() {
    const std::size_t groups = groups_.size();
    while (std::find(ok_.begin(), ok_.end(), 1) != ok_.end()) {
      std::vector<std::size_t> root(groups + graph_.op_count());
      for (std::size_t n = 0; n < root.size(); ++n) root[n] = n;
      auto find = [&](std::size_t n) {
        while (root[n] != n) n = root[n] = root[root[n]];
        return n;
      };
      auto node_of = [&](std::size_t op) {
        const std::uint32_t g = initial_group_[op];
        return find(g != kNoGroup && ok_[g] ? g : groups + op);
      };
      for (std::size_t c = 0; c < graph_.collective_count(); ++c) {
        const auto members = graph_.collective_members(CollectiveId::at(c));
        for (OpId member : members) root[node_of(member.value())] = node_of(members.front().value());
      }
      std::vector<std::vector<std::size_t>> successors(root.size());
      std::vector<std::size_t> waiting(root.size(), 0);
      for (std::size_t i = 0; i < graph_.op_count(); ++i) {
        const std::size_t to = node_of(i);
        for (OpId p : predecessors_[i]) {
          const std::size_t from = node_of(p.value());
          if (from == to) continue;
          successors[from].push_back(to);
          ++waiting[to];
        }
      }
      std::vector<std::size_t> ready;
      for (std::size_t n = 0; n < root.size(); ++n) {
        if (find(n) == n && waiting[n] == 0) ready.push_back(n);
      }
      while (!ready.empty()) {
        const std::size_t n = ready.back();
        ready.pop_back();
        for (std::size_t to : successors[n]) {
          if (--waiting[to] == 0) ready.push_back(to);
        }
      }
      bool dropped = false;
      for (std::size_t g = 0; g < groups; ++g) {
        if (ok_[g] && waiting[find(g)] > 0) {
          ok_[g] = 0;
          dropped = true;
        }
      }
      if (!dropped) return;
    }
  }

  // Tensors made in a group and read only there (not ports of the parts) move into its template.
  void classify_tensors() {
    std::vector<std::uint8_t> boundary(graph_.tensor_count(), 0);
    for (TensorId t : parts_.inputs) boundary[t.value()] = 1;
    for (TensorId t : parts_.outputs) boundary[t.value()] = 1;
    for (const Subgraph::Bundle& bundle : parts_.bundles) {
      for (TensorId member : bundle.members) boundary[member.value()] = 1;
    }
    inside_.assign(graph_.tensor_count(), kNoGroup);
    for (std::size_t t = 0; t < graph_.tensor_count(); ++t) {
      const TensorId tensor = TensorId::at(t);
      const OpId producer = graph_.tensor_producer(tensor);
      if (boundary[t] != 0 || !producer.valid() || lives_whole_run(graph_.tensor_kind(tensor))) continue;
      const std::uint32_t group = op_group_[producer.value()];
      const auto readers = graph_.tensor_consumers(tensor);
      if (group == kNoGroup || readers.empty()) continue;
      if (std::all_of(readers.begin(), readers.end(), [&](OpId r) { return op_group_[r.value()] == group; }))
        inside_[t] = group;
    }
  }

  // How group `g` maps onto its template: template devices, streams and tensors in the order its
  // ops first touch them, its ports, and a hash of everything its template would hold, so that
  // a group like one seen before is bound to that one's template without building its own.
  struct Layout {
    std::string prefix;
    std::vector<DeviceId> devices;  // of the graph, by template device
    std::vector<StreamId> streams;  // by template stream
    std::vector<TensorId> tensors;  // by template tensor
    std::unordered_map<std::uint32_t, std::uint32_t> device_index, stream_index, tensor_index, op_index;
    std::uint64_t key = 0;
  };

  Layout layout(std::size_t g) {
    const std::vector<OpId>& ops = groups_[g];
    Wrapped& wrapped = wrapped_[g];
    Layout layout;
    layout.prefix = common_prefix(graph_, ops);
    wrapped.name = layout.prefix.empty() ? std::string() : layout.prefix.substr(0, layout.prefix.size() - 1);
    std::uint64_t& h = layout.key;
    h = hash_mix(0, ops.size());
    auto index_of = [](std::unordered_map<std::uint32_t, std::uint32_t>& index, std::uint32_t id, auto& list,
                       auto value) {
      const auto [it, made] = index.try_emplace(id, static_cast<std::uint32_t>(list.size()));
      if (made) list.push_back(value);
      return std::pair(it->second, made);
    };
    for (std::size_t i = 0; i < ops.size(); ++i) layout.op_index.emplace(ops[i].value(), static_cast<std::uint32_t>(i));
    for (OpId op : ops) {
      const StreamId stream = graph_.op_stream(op);
      const auto [s, new_stream] = index_of(layout.stream_index, stream.value(), layout.streams, stream);
      if (!new_stream) continue;
      const DeviceId device = graph_.stream(stream).device;
      const auto [d, new_device] = index_of(layout.device_index, device.value(), layout.devices, device);
      if (new_device) h = hash_mix(h, spec_hash(graph_.device(device).spec));
      h = hash_mix(hash_mix(h, s), d);
    }
    std::unordered_map<std::uint32_t, std::uint8_t> all_weak;  // by input: whether every read is weak
    auto touch = [&](TensorId t, bool read, bool weak) {
      const auto [index, made] = index_of(layout.tensor_index, t.value(), layout.tensors, t);
      h = hash_mix(hash_mix(h, index), weak ? 1 : 0);
      const OpId producer = graph_.tensor_producer(t);
      const bool from_outside = !producer.valid() || op_group_[producer.value()] != g;
      if (read && from_outside) {
        auto [it, first] = all_weak.try_emplace(t.value(), 1);
        it->second = static_cast<std::uint8_t>(it->second != 0 && weak);
      }
      if (!made) return;
      const TensorRecord& record = graph_.tensor(t);
      const bool inside = inside_[t.value()] == g;
      if (from_outside) {
        wrapped.inputs.push_back(t);
      } else if (!inside) {
        wrapped.outputs.push_back(t);
      }
      h = hash_mix(h, static_cast<std::uint64_t>(record.kind) * 4 + (from_outside ? 2 : 0) + (inside ? 1 : 0));
      h = hash_mix(hash_mix(h, static_cast<std::uint64_t>(record.bytes)),
                   layout.device_index.at(record.device.value()));
      if (inside) h = hash_mix(h, hash_text(without(graph_.tensor_name(t), layout.prefix)));
    };
    for (OpId op : ops) {
      h = hash_mix(h, layout.stream_index.at(graph_.op_stream(op).value()));
      h = hash_mix(h, work_hash(graph_.op_work_id(op)));
      h = hash_mix(h, hash_text(without(graph_.op_name(op), layout.prefix)));
      const auto inputs = graph_.op_inputs(op);
      for (std::size_t k = 0; k < inputs.size(); ++k) touch(inputs[k], true, graph_.input_is_weak(op, k));
      h = hash_mix(h, ~0ULL);
      for (TensorId output : graph_.op_outputs(op)) touch(output, false, false);
      h = hash_mix(h, ~1ULL);
      for (OpId successor : graph_.control_successors(op)) h = hash_mix(h, layout.op_index.at(successor.value()));
    }
    for (CollectiveId c : collectives_[g]) {
      h = hash_mix(h, hash_text(without(graph_.collective_name(c), layout.prefix)));
      for (OpId member : graph_.collective_members(c)) h = hash_mix(h, layout.op_index.at(member.value()));
    }
    for (std::size_t s = 0; s < parts_.signals.size(); ++s) {
      const OpId op = parts_.signals[s].op;
      if (op_group_[op.value()] != g) continue;
      h = hash_mix(h, layout.op_index.at(op.value()));
      wrapped.signals.push_back(static_cast<std::uint32_t>(s));
    }
    wrapped.streams = layout.streams;
    for (TensorId t : wrapped.inputs) wrapped.weak_inputs.push_back(all_weak.at(t.value()));
    return layout;
  }

  void wrap(std::size_t g) {
    const Layout layout = this->layout(g);
    Wrapped& wrapped = wrapped_[g];
    wrapped.subgraph = templates_.find(layout.key);
    if (!wrapped.subgraph) wrapped.subgraph = templates_.insert(layout.key, make_template(g, layout));
  }

  std::shared_ptr<const Subgraph> make_template(std::size_t g, const Layout& layout) const {
    const Wrapped& wrapped = wrapped_[g];
    GraphBuilder builder;
    std::vector<DeviceId> devices;
    for (std::size_t d = 0; d < layout.devices.size(); ++d) {
      devices.push_back(
          builder.add_device("d" + std::to_string(d), builder.add_device_spec(graph_.device_spec(layout.devices[d]))));
    }
    for (std::size_t s = 0; s < layout.streams.size(); ++s) {
      const StreamInfo& outer = graph_.stream(layout.streams[s]);
      builder.add_stream(devices[layout.device_index.at(outer.device.value())], "s" + std::to_string(s),
                         StreamPolicy::in_order, outer.host_issued);
    }
    for (TensorId t : layout.tensors) {
      const TensorRecord& record = graph_.tensor(t);
      // A port stands for a tensor outside, which keeps its own name.
      const bool inside = inside_[t.value()] == g;
      builder.add_tensor(inside ? without(graph_.tensor_name(t), layout.prefix) : std::string_view(),
                         devices[layout.device_index.at(record.device.value())], record.kind, record.bytes);
    }
    auto inner = [&](TensorId t) { return TensorId::at(layout.tensor_index.at(t.value())); };
    auto inner_op = [&](OpId op) { return OpId::at(layout.op_index.at(op.value())); };
    for (OpId op : groups_[g]) {
      const OpId made =
          builder.add_op(without(graph_.op_name(op), layout.prefix), builder.intern_work(graph_.op_work(op)),
                         StreamId::at(layout.stream_index.at(graph_.op_stream(op).value())));
      const auto inputs = graph_.op_inputs(op);
      for (std::size_t k = 0; k < inputs.size(); ++k)
        builder.add_input(made, inner(inputs[k]), graph_.input_is_weak(op, k));
      for (TensorId output : graph_.op_outputs(op)) builder.add_output(made, inner(output));
    }
    for (OpId op : groups_[g]) {
      for (OpId successor : graph_.control_successors(op)) builder.add_control_edge(inner_op(op), inner_op(successor));
    }
    for (CollectiveId c : collectives_[g]) {
      std::vector<OpId> made;
      for (OpId member : graph_.collective_members(c)) made.push_back(inner_op(member));
      builder.add_collective(without(graph_.collective_name(c), layout.prefix), made);
    }
    std::vector<Subgraph::Signal> signals;
    for (std::uint32_t s : wrapped.signals) signals.emplace_back(inner_op(parts_.signals[s].op));
    std::vector<TensorId> input_ports;
    for (TensorId t : wrapped.inputs) input_ports.push_back(inner(t));
    std::vector<TensorId> output_ports;
    for (TensorId t : wrapped.outputs) output_ports.push_back(inner(t));
    return std::make_shared<const Subgraph>(wrapped.name.empty() ? std::string("group") : wrapped.name,
                                            std::move(builder).build(), std::move(input_ports), std::move(output_ports),
                                            std::move(signals));
  }

  std::uint64_t work_hash(WorkId work) {
    if (work_hashes_.size() <= work.value()) work_hashes_.resize(graph_.work_count(), 0);
    std::uint64_t& h = work_hashes_[work.value()];
    if (h == 0) h = OpWorkHash{}(graph_.work(work)) | 1;
    return h;
  }

  std::uint64_t spec_hash(DeviceSpecId id) const {
    const DeviceSpec& spec = graph_.spec(id);
    std::uint64_t h = hash_text(spec.name);
    h = hash_mix(h, static_cast<std::uint64_t>(spec.kind));
    for (double peak : spec.peak_flops) h = hash_mix(h, std::bit_cast<std::uint64_t>(peak));
    h = hash_mix(h, std::bit_cast<std::uint64_t>(spec.memory_bandwidth));
    h = hash_mix(h, std::bit_cast<std::uint64_t>(spec.network_bandwidth));
    h = hash_mix(h, std::bit_cast<std::uint64_t>(spec.speed));
    return hash_mix(h, static_cast<std::uint64_t>(spec.memory_capacity));
  }

  TemplateParts build_outer() {
    GraphBuilder builder;
    builder.copy_platform(graph_);
    std::vector<TensorId> tensor_of(graph_.tensor_count(), TensorId::none());
    for (std::size_t t = 0; t < graph_.tensor_count(); ++t) {
      if (inside_[t] != kNoGroup) continue;
      const TensorRecord& record = graph_.tensor(TensorId::at(t));
      tensor_of[t] = builder.add_tensor(graph_.tensor_name(TensorId::at(t)), record.device, record.kind, record.bytes);
    }
    auto outer = [&](std::span<const TensorId> tensors) {
      std::vector<TensorId> mapped;
      for (TensorId t : tensors) mapped.push_back(tensor_of[t.value()]);
      return mapped;
    };
    std::vector<OpId> op_of(graph_.op_count(), OpId::none());
    std::unordered_map<const Subgraph*, SubgraphId> registered;
    for (std::size_t i = 0; i < graph_.op_count(); ++i) {
      const OpId op = OpId::at(i);
      const std::uint32_t group = op_group_[i];
      if (group == kNoGroup) {
        op_of[i] = builder.add_op(graph_.op_name(op), builder.intern_work(graph_.op_work(op)), graph_.op_stream(op));
        const auto inputs = graph_.op_inputs(op);
        for (std::size_t k = 0; k < inputs.size(); ++k)
          builder.add_input(op_of[i], tensor_of[inputs[k].value()], graph_.input_is_weak(op, k));
        for (TensorId output : graph_.op_outputs(op)) builder.add_output(op_of[i], tensor_of[output.value()]);
        continue;
      }
      if (groups_[group].front() != op) continue;  // the composite stands at the group's first op
      const Wrapped& wrapped = wrapped_[group];
      auto [it, made] = registered.try_emplace(wrapped.subgraph.get(), SubgraphId::none());
      if (made) it->second = builder.add_subgraph(wrapped.subgraph);
      op_of[i] = builder.add_composite(wrapped.name, it->second, wrapped.streams, outer(wrapped.inputs),
                                       outer(wrapped.outputs), wrapped.weak_inputs);
    }
    for (std::size_t i = 0; i < graph_.op_count(); ++i) {
      if (op_group_[i] != kNoGroup) continue;
      for (OpId successor : graph_.control_successors(OpId::at(i))) {
        builder.add_control_edge(op_of[i], op_of[successor.value()]);
      }
    }
    for (std::size_t c = 0; c < graph_.collective_count(); ++c) {
      const auto members = graph_.collective_members(CollectiveId::at(c));
      if (op_group_[members.front().value()] != kNoGroup) continue;
      std::vector<OpId> mapped;
      for (OpId member : members) mapped.push_back(op_of[member.value()]);
      builder.add_collective(graph_.collective_name(CollectiveId::at(c)), mapped);
    }
    TemplateParts result;
    result.inputs = outer(parts_.inputs);
    result.outputs = outer(parts_.outputs);
    for (const Subgraph::Bundle& bundle : parts_.bundles)
      result.bundles.push_back({tensor_of[bundle.port.value()], outer(bundle.members)});
    for (std::size_t s = 0; s < parts_.signals.size(); ++s) {
      const OpId op = parts_.signals[s].op;
      const std::uint32_t group = op_group_[op.value()];
      if (group == kNoGroup) {
        result.signals.emplace_back(op_of[op.value()]);
        continue;
      }
      const std::vector<std::uint32_t>& held = wrapped_[group].signals;
      const auto inner = std::find(held.begin(), held.end(), static_cast<std::uint32_t>(s)) - held.begin();
      result.signals.emplace_back(op_of[groups_[group].front().value()], static_cast<std::int32_t>(inner));
    }
    result.graph = std::move(builder).build();
    return result;
  }

  const TemplateParts& parts_;
  const Graph& graph_;
  GroupTemplates& templates_;
  std::vector<std::vector<OpId>> groups_;               // ops of each group, in id order
  std::vector<std::uint8_t> ok_;                        // per group: whether it is wrapped
  std::vector<std::uint32_t> initial_group_;            // per op: its group as labelled
  std::vector<std::uint32_t> op_group_;                 // per op: its group if wrapped
  std::vector<std::uint32_t> inside_;                   // per tensor: the group whose template holds it
  std::vector<std::vector<OpId>> predecessors_;         // per op
  std::vector<std::vector<CollectiveId>> collectives_;  // per group: the collectives inside it
  std::vector<Wrapped> wrapped_;
  std::vector<std::uint64_t> work_hashes_;  // by work id, computed on first use (0: not yet)
};

}  // namespace

std::shared_ptr<const Subgraph> GroupTemplates::find(std::uint64_t key) const {
  const auto it = by_content_.find(key);
  return it == by_content_.end() ? nullptr : it->second;
}

std::shared_ptr<const Subgraph> GroupTemplates::insert(std::uint64_t key, std::shared_ptr<const Subgraph> made) {
  return by_content_.emplace(key, std::move(made)).first->second;
}

TemplateParts wrap_op_groups(const TemplateParts& parts, std::span<const std::uint32_t> group_of_op,
                             GroupTemplates& templates) {
  return GroupWrapper(parts, group_of_op, templates).run();
}

}  // namespace weft
