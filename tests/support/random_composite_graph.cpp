#include "tests/support/random_composite_graph.hpp"

#include <algorithm>
#include <cstdint>
#include <random>
#include <string>

#include "simulator/graph/op_grouping.hpp"

namespace weft::test {
namespace {

struct TensorInfo {
  TensorId id;
  DeviceId device;
  Bytes bytes = 0;
  bool produced = false;
  bool read = false;
  bool read_by_composite = false;
};

// The members' sizes of every bundle of one random graph, so that any template's output bundle
// can feed any template's input bundle.
using BundleShape = std::vector<Bytes>;

// Adds random ops to one UnitPlatform: a template's or the outer graph's.
class OpsGenerator {
 public:
  OpsGenerator(std::mt19937_64& rng, UnitPlatform& platform, int gpu_count, bool with_link) : rng_(rng), p_(platform) {
    for (int g = 0; g < gpu_count; ++g) gpus_.push_back(p_.add_gpu("gpu" + std::to_string(g)));
    if (with_link) link_ = p_.add_link("link");
  }

  int uniform(int low, int high) { return std::uniform_int_distribution<int>(low, high)(rng_); }
  bool chance(double p) { return std::uniform_real_distribution<double>(0, 1)(rng_) < p; }
  template <class T>
  const T& pick(const std::vector<T>& from) {
    return from[static_cast<std::size_t>(uniform(0, static_cast<int>(from.size()) - 1))];
  }

  const std::vector<DeviceId>& gpus() const { return gpus_; }
  std::vector<TensorInfo>& tensors() { return tensors_; }
  const std::vector<OpId>& primitive_ops() const { return primitive_ops_; }

  std::vector<StreamId> in_order_streams() const {
    std::vector<StreamId> streams;
    for (DeviceId gpu : gpus_) {
      streams.push_back(p_.compute(gpu));
      streams.push_back(p_.comm(gpu));
    }
    return streams;
  }

  // A tensor with no producer: an input port, or data that exists before the run.
  TensorId add_source_tensor(DeviceId device, Bytes bytes, TensorKind kind = TensorKind::activation) {
    const TensorId id = p_.tensor("in" + std::to_string(tensors_.size()), device, bytes, kind);
    tensors_.push_back({id, device, bytes, false, false});
    return id;
  }

  // Collective members read and wait for nothing made since the first of them was added.
  void begin_collective() {
    visible_ops_ = ops_.size();
    visible_tensors_ = tensors_.size();
  }
  void end_collective() { visible_ops_ = visible_tensors_ = SIZE_MAX; }

  OpId add_primitive(StreamId stream, OpClass op_class = OpClass::gemm) {
    const bool comm = device_of(stream) == link_ || stream == p_.comm(device_of(stream));
    if (comm && op_class == OpClass::gemm) op_class = OpClass::send;
    // Kernels of two classes, which a host may take different times to issue.
    if (chance(0.3) && op_class == OpClass::gemm) op_class = OpClass::elementwise;
    const TimeNs ns = chance(0.1) ? 0 : uniform(1, 40);
    const OpId op = p_.op("op" + std::to_string(ops_.size()), stream, ns, op_class);
    const std::size_t readable = std::min(tensors_.size(), visible_tensors_);
    for (int r = uniform(0, 2); r > 0 && readable > 0; --r) {
      read(op, static_cast<std::size_t>(uniform(0, static_cast<int>(readable) - 1)));
    }
    for (int w = uniform(0, 2); w > 0; --w) {
      const DeviceId device = chance(0.8) && device_of(stream) != link_ ? device_of(stream) : pick(gpus_);
      produce(op, device, uniform(0, 1000));
    }
    finish_op(op);
    primitive_ops_.push_back(op);
    return op;
  }

  // A composite of `subgraph` (whose GPUs are its devices 0..n-1, each with streams compute and
  // comm) on distinct random GPUs; each GPU's two streams are bound in random order. An input
  // bundle reads a bundle that an earlier composite left on its GPU; without one, no composite is
  // added (none is returned).
  OpId add_composite(const std::shared_ptr<const Subgraph>& subgraph, SubgraphId id) {
    const Graph& inner = subgraph->graph();
    std::vector<DeviceId> placement = gpus_;
    std::shuffle(placement.begin(), placement.end(), rng_);
    std::vector<TensorId> bundles_read;
    for (TensorId port : subgraph->inputs()) {
      if (inner.tensor_kind(port) != TensorKind::bundle) continue;
      const DeviceId device = placement[inner.tensor_device(port).value()];
      auto it = std::find_if(unread_bundles_.begin(), unread_bundles_.end(),
                             [&](TensorId bundle) { return p_.builder().tensor(bundle).device == device; });
      if (it == unread_bundles_.end()) return OpId::none();
      bundles_read.push_back(*it);
      unread_bundles_.erase(it);
    }
    std::vector<bool> swapped(inner.device_count());
    for (std::size_t d = 0; d < swapped.size(); ++d) swapped[d] = chance(0.5);
    std::vector<StreamId> streams;
    for (std::size_t s = 0; s < inner.stream_count(); ++s) {
      const auto& info = inner.stream(StreamId(static_cast<StreamId::value_type>(s)));
      const DeviceId gpu = placement[info.device.value()];
      const bool compute = (info.name == "compute") != swapped[info.device.value()];
      streams.push_back(compute ? p_.compute(gpu) : p_.comm(gpu));
    }
    std::vector<TensorId> inputs;
    std::size_t next_bundle = 0;
    for (TensorId port : subgraph->inputs()) {
      const DeviceId device = placement[inner.tensor_device(port).value()];
      if (inner.tensor_kind(port) == TensorKind::bundle) {
        inputs.push_back(bundles_read[next_bundle++]);
      } else {
        inputs.push_back(tensor_for_port(device, inner.tensor_bytes(port)));
      }
    }
    std::vector<TensorId> outputs;
    for (TensorId port : subgraph->outputs()) {
      const DeviceId device = placement[inner.tensor_device(port).value()];
      const TensorKind kind = inner.tensor_kind(port);
      const TensorId tensor = p_.tensor("t" + std::to_string(tensors_.size()), device, inner.tensor_bytes(port), kind);
      outputs.push_back(tensor);
      if (kind == TensorKind::bundle) {
        unread_bundles_.push_back(tensor);
      } else {
        tensors_.push_back({tensor, device, inner.tensor_bytes(port), true, false});
      }
    }
    const OpId op = p_.builder().add_composite("c" + std::to_string(ops_.size()), id, streams, inputs, outputs);
    finish_op(op);
    for (std::size_t k = 0; k < subgraph->signals().size(); ++k) {
      if (chance(0.6)) pending_signals_.emplace_back(op, static_cast<std::uint32_t>(k));
    }
    return op;
  }

  // Control edges and signal edges from earlier ops to `op`.
  void finish_op(OpId op) {
    const std::size_t earlier = std::min(ops_.size(), visible_ops_);
    if (earlier > 0 && chance(0.25)) {
      p_.builder().add_control_edge(ops_[static_cast<std::size_t>(uniform(0, static_cast<int>(earlier) - 1))], op);
    }
    if (!pending_signals_.empty() && visible_ops_ == SIZE_MAX && chance(0.5)) {
      const auto [composite, signal] = pending_signals_.back();
      pending_signals_.pop_back();
      p_.builder().add_signal_edge(composite, signal, op);
    }
    ops_.push_back(op);
  }

  void read(OpId op, std::size_t tensor) {
    p_.builder().add_input(op, tensors_[tensor].id);
    tensors_[tensor].read = true;
  }

  TensorId produce(OpId op, DeviceId device, Bytes bytes) {
    const TensorId tensor = p_.tensor("t" + std::to_string(tensors_.size()), device, bytes);
    p_.builder().add_output(op, tensor);
    tensors_.push_back({tensor, device, bytes, true, false});
    return tensor;
  }

 private:
  DeviceId device_of(StreamId stream) const {
    for (DeviceId gpu : gpus_) {
      if (p_.compute(gpu) == stream || p_.comm(gpu) == stream) return gpu;
    }
    return link_;
  }

  // An existing tensor on `device` of `bytes` bytes, or a new one made by an earlier op or
  // existing before the run.
  TensorId tensor_for_port(DeviceId device, Bytes bytes) {
    std::vector<std::size_t> matching;
    for (std::size_t t = 0; t < tensors_.size(); ++t) {
      if (tensors_[t].device == device && tensors_[t].bytes == bytes) matching.push_back(t);
    }
    if (!matching.empty() && chance(0.5)) {
      const std::size_t t = pick(matching);
      tensors_[t].read = tensors_[t].read_by_composite = true;
      return tensors_[t].id;
    }
    const TensorId tensor = primitive_ops_.empty() || chance(0.3) ? add_source_tensor(device, bytes)
                                                                  : produce(pick(primitive_ops_), device, bytes);
    tensors_.back().read = tensors_.back().read_by_composite = true;
    return tensor;
  }

  std::mt19937_64& rng_;
  UnitPlatform& p_;
  std::vector<DeviceId> gpus_;
  DeviceId link_ = DeviceId::none();
  std::vector<TensorInfo> tensors_;
  std::vector<OpId> ops_;
  std::vector<OpId> primitive_ops_;
  std::vector<std::pair<OpId, std::uint32_t>> pending_signals_;
  std::vector<TensorId> unread_bundles_;  // outer bundles no composite reads yet
  std::size_t visible_ops_ = SIZE_MAX;
  std::size_t visible_tensors_ = SIZE_MAX;
};

// Registers `subgraph` with the platform's builder (once per template).
SubgraphId register_template(UnitPlatform& platform, const std::shared_ptr<const Subgraph>& subgraph) {
  return platform.builder().add_subgraph(subgraph);
}

// A bundle port of the template on `device` standing for `members`.
Subgraph::Bundle make_bundle(UnitPlatform& platform, DeviceId device, std::vector<TensorId> members) {
  Bytes bytes = 0;
  for (TensorId member : members) bytes += platform.builder().tensor(member).bytes;
  return {platform.tensor("bundle", device, bytes, TensorKind::bundle), std::move(members)};
}

// A random template. `layered` ones look like a model layer: the first op runs on the
// composite's own stream and reads every input, and the first op of each other stream waits for
// it; such templates can be reused unless something outside delays them. Others start their
// streams anywhere, which often makes reuse inexact. Templates that may be nested have no
// bundles; others may take a bundle of `shape` in, or leave one, or both.
std::shared_ptr<const Subgraph> make_template(std::mt19937_64& rng, int index, bool layered,
                                              const std::vector<std::shared_ptr<const Subgraph>>& nestable,
                                              const BundleShape& shape, GroupTemplates* groups, TimeNs host_issue_ns,
                                              TimeNs kernel_gap_ns) {
  UnitPlatform platform(host_issue_ns, kernel_gap_ns);
  OpsGenerator gen(rng, platform, std::uniform_int_distribution<int>(0, 9)(rng) < 3 ? 2 : 1, false);
  const bool bundles = gen.gpus().size() == 2 || gen.chance(0.7);
  const bool takes_bundle = bundles && gen.chance(0.6);
  const bool leaves_bundle = bundles && gen.chance(0.7);
  for (int i = gen.uniform(1, 3); i > 0; --i) {
    const TensorKind kind = gen.chance(0.2) ? TensorKind::parameter : TensorKind::activation;
    gen.add_source_tensor(gen.pick(gen.gpus()), gen.uniform(0, 1000), kind);
  }
  const DeviceId bundle_device = gen.pick(gen.gpus());
  std::vector<TensorId> taken;
  if (takes_bundle) {
    for (Bytes bytes : shape) taken.push_back(gen.add_source_tensor(bundle_device, bytes));
  }
  // Every stream gets an op; then more on random streams, some of them nested composites.
  std::vector<StreamId> streams = gen.in_order_streams();
  if (layered) {
    const OpId first = gen.add_primitive(streams.front());
    for (std::size_t t = 0; t < gen.tensors().size(); ++t) {
      if (!gen.tensors()[t].produced) gen.read(first, t);
    }
    for (std::size_t k = 1; k < streams.size(); ++k) {
      platform.builder().add_control_edge(first, gen.add_primitive(streams[k]));
    }
  } else {
    std::shuffle(streams.begin(), streams.end(), rng);
    for (StreamId stream : streams) gen.add_primitive(stream);
  }
  for (int extra = gen.uniform(0, 6); extra > 0; --extra) {
    if (!nestable.empty() && gen.chance(0.3)) {
      const auto& nested = gen.pick(nestable);
      gen.add_composite(nested, register_template(platform, nested));
    } else {
      gen.add_primitive(gen.pick(streams));
    }
  }
  std::vector<Subgraph::Bundle> bundle_ports;
  // An output bundle's members: made by primitive ops, read nowhere inside.
  if (leaves_bundle) {
    std::vector<OpId> producers;
    for (std::size_t m = 0; m < shape.size(); ++m) producers.push_back(gen.add_primitive(gen.pick(streams)));
    std::vector<TensorId> made;
    for (std::size_t m = 0; m < shape.size(); ++m) {
      made.push_back(gen.produce(producers[m], bundle_device, shape[m]));
      gen.tensors().back().read = true;  // it leaves with the bundle, not as an output of its own
    }
    // Ops inside may read members too (they then live until the later of both readers).
    for (int extra = gen.uniform(0, 2); extra > 0; --extra) gen.add_primitive(gen.pick(streams));
    bundle_ports.push_back(make_bundle(platform, bundle_device, std::move(made)));
  }
  // Tensors from outside are the inputs and must be read inside; tensors made inside must be
  // read inside or leave as outputs. An input bundle's members are read by primitive ops only.
  std::vector<TensorId> inputs;
  std::vector<TensorId> outputs;
  for (std::size_t t = 0; t < gen.tensors().size(); ++t) {
    const TensorInfo& tensor = gen.tensors()[t];
    if (tensor.produced) continue;
    const bool member = std::find(taken.begin(), taken.end(), tensor.id) != taken.end();
    if (!tensor.read || (member && tensor.read_by_composite)) gen.read(gen.pick(gen.primitive_ops()), t);
    if (!member) inputs.push_back(tensor.id);
  }
  if (takes_bundle) {
    // Members a composite read would break the bundle's rule: such a template takes no bundle.
    bool only_primitive_readers = true;
    for (const TensorInfo& tensor : gen.tensors()) {
      if (std::find(taken.begin(), taken.end(), tensor.id) != taken.end() && tensor.read_by_composite)
        only_primitive_readers = false;
    }
    if (only_primitive_readers) {
      bundle_ports.push_back(make_bundle(platform, bundle_device, taken));
      inputs.push_back(bundle_ports.back().port);
    } else {
      inputs.insert(inputs.end(), taken.begin(), taken.end());
    }
  }
  for (const TensorInfo& tensor : gen.tensors()) {
    if (tensor.produced && (!tensor.read || gen.chance(0.15))) {
      const bool member =
          leaves_bundle && std::find(bundle_ports.front().members.begin(), bundle_ports.front().members.end(),
                                     tensor.id) != bundle_ports.front().members.end();
      if (!member) outputs.push_back(tensor.id);
    }
  }
  if (leaves_bundle) outputs.push_back(bundle_ports.front().port);
  std::vector<Subgraph::Signal> signals;
  if (gen.chance(0.4))
    signals.push_back(
        OpId(static_cast<OpId::value_type>(gen.uniform(0, static_cast<int>(platform.builder().op_count()) - 1))));
  TemplateParts parts{platform.build(), std::move(inputs), std::move(outputs), std::move(signals),
                      std::move(bundle_ports)};
  if (groups != nullptr && parts.graph.composite_count() == 0) {
    // Runs of consecutive ops as groups, drawn apart from `rng` so that the graph is the same.
    std::mt19937_64 group_rng(static_cast<std::uint64_t>(index) * 7919 + parts.graph.op_count());
    std::vector<std::uint32_t> labels;
    std::uint32_t label = 0;
    for (std::size_t i = 0; i < parts.graph.op_count(); ++i) {
      const int dice = std::uniform_int_distribution<int>(0, 9)(group_rng);
      if (dice < 3) ++label;
      labels.push_back(dice == 9 ? kNoGroup : label);
    }
    parts = wrap_op_groups(parts, labels, *groups);
  }
  return std::make_shared<const Subgraph>("template" + std::to_string(index), std::move(parts.graph),
                                          std::move(parts.inputs), std::move(parts.outputs), std::move(parts.signals),
                                          std::move(parts.bundles));
}

}  // namespace

RandomCompositeGraph make_random_composite_graph(std::uint64_t seed, bool wrap_groups, TimeNs host_issue_ns,
                                                 TimeNs kernel_gap_ns) {
  GroupTemplates groups;
  std::mt19937_64 rng(seed);
  std::vector<std::shared_ptr<const Subgraph>> templates;
  std::vector<std::shared_ptr<const Subgraph>> nestable;
  BundleShape shape(static_cast<std::size_t>(std::uniform_int_distribution<int>(1, 3)(rng)));
  for (Bytes& bytes : shape) bytes = std::uniform_int_distribution<Bytes>(0, 1000)(rng);
  for (int t = 0, count = std::uniform_int_distribution<int>(1, 3)(rng); t < count; ++t) {
    templates.push_back(make_template(rng, t, std::uniform_int_distribution<int>(0, 3)(rng) != 0, nestable, shape,
                                      wrap_groups ? &groups : nullptr, host_issue_ns, kernel_gap_ns));
    const Subgraph& made = *templates.back();
    bool has_bundles = false;
    for (const auto* ports : {&made.inputs(), &made.outputs()}) {
      for (TensorId port : *ports) has_bundles = has_bundles || made.graph().tensor_kind(port) == TensorKind::bundle;
    }
    if (made.graph().device_count() == 1 && !has_bundles) nestable.push_back(templates.back());
  }

  UnitPlatform platform(host_issue_ns, kernel_gap_ns);
  OpsGenerator gen(rng, platform, 3, true);
  for (int i = gen.uniform(0, 3); i > 0; --i) gen.add_source_tensor(gen.pick(gen.gpus()), gen.uniform(0, 1000));
  std::vector<StreamId> streams = gen.in_order_streams();
  for (int ops = gen.uniform(4, 24); ops > 0; --ops) {
    if (gen.chance(0.45)) {
      const auto& subgraph = gen.pick(templates);
      gen.add_composite(subgraph, register_template(platform, subgraph));
    } else if (gen.chance(0.1)) {
      std::vector<OpId> members;
      gen.begin_collective();
      for (DeviceId gpu : gen.gpus()) {
        if (members.empty() || gen.chance(0.6)) {
          members.push_back(gen.add_primitive(platform.comm(gpu), OpClass::allreduce));
        }
      }
      gen.end_collective();
      // Their own durations differ; the longest counts.
      if (members.size() >= 2) platform.builder().add_collective("collective" + std::to_string(ops), members);
    } else {
      gen.add_primitive(gen.chance(0.15) ? platform.comm(DeviceId(3)) : gen.pick(streams));
    }
  }
  RooflineCostModel cost_model = platform.cost_model();
  return {platform.build(), std::move(cost_model), std::move(templates)};
}

}  // namespace weft::test
