#include "simulator/io/graph_scenario.hpp"

#include <map>
#include <optional>
#include <unordered_map>
#include <unordered_set>

#include <fmt/format.h>

#include "simulator/graph/graph_builder.hpp"
#include "simulator/graph/graph_size_limit.hpp"

namespace weft {
namespace {

struct DeviceEntry {
  DeviceId id;
  DeviceKind kind;
  std::map<std::string, StreamId, std::less<>> streams;
  std::string only_stream;  // the stream ops default to, when the device has exactly one
};

class GraphScenarioReader {
 public:
  explicit GraphScenarioReader(std::int64_t max_ops) : max_ops_(max_ops) {}

  GraphScenario read(const JsonCursor& root) {
    root.expect_only({"description", "devices", "tensors", "ops", "cost"});
    std::string description;
    if (auto value = root.find("description")) description = value->as_string();
    std::optional<RooflineCostModel> cost_model;
    if (auto value = root.find("cost")) cost_model = RooflineCostModel::from_json(*value);
    read_devices(root.at("devices"));
    if (auto tensors = root.find("tensors")) read_tensors(*tensors);
    check_size(root.at("ops"));
    read_ops(root.at("ops"));
    Graph graph = build(root.at("ops"));
    return {std::move(description), std::move(graph), cost_model ? std::move(*cost_model) : RooflineCostModel()};
  }

 private:
  void check_size(const JsonCursor& ops) const {
    const auto count = static_cast<std::int64_t>(ops.json().size());
    const std::int64_t limit = graph_op_limit(max_ops_);
    if (count > limit) {
      ops.fail(fmt::format("{} ops, about {:.1f} GB to hold; the limit is {} ops ({})", count,
                           static_cast<double>(count * kGraphBytesPerOp) / kBytesPerGB, limit,
                           graph_op_limit_source(max_ops_)));
    }
  }

  static std::string unique_name(const JsonCursor& json, std::unordered_set<std::string>& seen, const char* what) {
    const JsonCursor name_json = json.at("name");
    std::string name = name_json.as_string();
    if (name.empty()) name_json.fail("expected a non-empty name");
    if (!seen.insert(name).second) name_json.fail("duplicate " + std::string(what) + " name '" + name + "'");
    return name;
  }

  DeviceSpecId intern_spec(const JsonCursor& json) {
    DeviceSpec spec = load_device_spec(json);
    if (auto it = specs_.find(spec.name); it != specs_.end()) {
      if (!(it->second.second == spec)) json.fail("device spec '" + spec.name + "' is defined twice, differently");
      return it->second.first;
    }
    const std::string name = spec.name;
    const DeviceSpecId id = builder_.add_device_spec(spec);
    spec_kinds_.push_back(spec.kind);
    specs_.emplace(name, std::make_pair(id, std::move(spec)));
    return id;
  }

  void read_devices(const JsonCursor& devices) {
    std::unordered_set<std::string> seen;
    const auto elements = devices.elements();
    if (elements.empty()) devices.fail("expected at least one device");
    for (const JsonCursor& device : elements) {
      device.expect_only({"name", "spec", "memory_MiB", "streams"});
      std::string name = unique_name(device, seen, "device");
      const DeviceSpecId spec = intern_spec(device.at("spec"));
      DeviceEntry entry{builder_.add_device(name, spec), spec_kinds_[spec.value()], {}, {}};
      if (auto memory = device.find("memory_MiB")) {
        builder_.set_memory_capacity(entry.id, static_cast<Bytes>(memory->as_nonnegative_number() * kBytesPerMiB));
      }
      read_streams(device, entry);
      devices_.emplace(std::move(name), std::move(entry));
    }
  }

  // A device's streams: names (policy by device kind) or {"name", "policy", "host_issued"}
  // objects. Without a list, a GPU gets "compute" and "comm", a CPU "compute", and a link one
  // first_ready "transfer".
  void read_streams(const JsonCursor& device, DeviceEntry& entry) {
    const StreamPolicy default_policy =
        entry.kind == DeviceKind::link ? StreamPolicy::first_ready : StreamPolicy::in_order;
    auto add = [&](const JsonCursor* where, std::string name, StreamPolicy policy, bool host_issued = false) {
      if (entry.streams.contains(name)) where->fail("duplicate stream name '" + name + "'");
      entry.streams.emplace(name, builder_.add_stream(entry.id, name, policy, host_issued));
    };
    if (auto streams = device.find("streams")) {
      const auto elements = streams->elements();
      if (elements.empty()) streams->fail("expected at least one stream");
      for (const JsonCursor& stream : elements) {
        if (stream.is_string()) {
          add(&stream, stream.as_string(), default_policy);
          continue;
        }
        stream.expect_only({"name", "policy", "host_issued"});
        const StreamPolicy policy =
            stream.find("policy") ? stream.at("policy").as_enum(kStreamPolicyNames) : default_policy;
        const bool host_issued = stream.find("host_issued") && stream.at("host_issued").as_bool();
        if (host_issued && policy != StreamPolicy::in_order)
          stream.at("host_issued").fail("a host issues in_order streams only");
        add(&stream, stream.at("name").as_string(), policy, host_issued);
      }
    } else if (entry.kind == DeviceKind::link) {
      add(&device, "transfer", default_policy);
    } else {
      add(&device, "compute", default_policy);
      if (entry.kind == DeviceKind::gpu) add(&device, "comm", default_policy);
    }
    if (entry.streams.size() == 1) entry.only_stream = entry.streams.begin()->first;
  }

  const DeviceEntry& device_named(const JsonCursor& json) const {
    const std::string name = json.as_string();
    auto it = devices_.find(name);
    if (it == devices_.end()) json.fail("unknown device '" + name + "'");
    return it->second;
  }

  void read_tensors(const JsonCursor& tensors) {
    std::unordered_set<std::string> seen;
    for (const JsonCursor& tensor : tensors.elements()) {
      tensor.expect_only({"name", "device", "kind", "bytes"});
      const std::string name = unique_name(tensor, seen, "tensor");
      const DeviceEntry& device = device_named(tensor.at("device"));
      if (device.kind == DeviceKind::link) tensor.at("device").fail("a link device has no memory for tensors");
      const TensorKind kind = tensor.at("kind").as_enum(kTensorKindNames);
      if (kind == TensorKind::bundle) tensor.at("kind").fail("bundles join composite ops, which graph scenarios lack");
      const Bytes bytes = tensor.at("bytes").as_nonnegative_int();
      tensors_.emplace(name, builder_.add_tensor(name, device.id, kind, bytes));
    }
  }

  TensorId tensor_named(const JsonCursor& json) const {
    const std::string name = json.as_string();
    auto it = tensors_.find(name);
    if (it == tensors_.end()) json.fail("unknown tensor '" + name + "'");
    return it->second;
  }

  StreamId stream_of(const JsonCursor& op, const DeviceEntry& device, const std::string& device_name) const {
    if (auto stream = op.find("stream")) {
      const std::string name = stream->as_string();
      auto it = device.streams.find(name);
      if (it == device.streams.end()) stream->fail("device '" + device_name + "' has no stream '" + name + "'");
      return it->second;
    }
    if (device.only_stream.empty()) {
      op.fail("missing required field 'stream' (device '" + device_name + "' has several streams)");
    }
    return device.streams.at(device.only_stream);
  }

  static OpWork read_work(const JsonCursor& op) {
    OpWork work;
    work.op_class = op.at("class").as_enum(kOpClassNames);
    if (auto dtype = op.find("dtype")) work.dtype = dtype->as_enum(kDtypeNames);
    if (auto kernel = op.find("kernel")) work.kernel = read_kernel(*kernel, work.op_class);
    if (auto flops = op.find("flops")) work.flops = flops->as_nonnegative_number();
    if (auto bytes = op.find("memory_bytes")) work.memory_bytes = bytes->as_nonnegative_int();
    if (auto bytes = op.find("network_bytes")) work.network_bytes = bytes->as_nonnegative_int();
    if (auto shape = op.find("shape")) {
      for (const JsonCursor& dim : shape->elements()) work.shape.push_back(dim.as_nonnegative_int());
    }
    return work;
  }

  void read_ops(const JsonCursor& ops) {
    std::unordered_set<std::string> seen;
    for (const JsonCursor& op : ops.elements()) {
      op.expect_only({"name", "class", "device", "stream", "dtype", "kernel", "flops", "memory_bytes", "network_bytes",
                      "shape", "inputs", "outputs", "after", "collective"});
      const std::string name = unique_name(op, seen, "op");
      const JsonCursor device_json = op.at("device");
      const DeviceEntry& device = device_named(device_json);
      const OpWork work = read_work(op);
      const OpId id = builder_.add_op(name, builder_.intern_work(work), stream_of(op, device, device_json.as_string()));
      ops_.emplace(name, id);
      if (auto inputs = op.find("inputs")) read_inputs(*inputs, id);
      if (auto outputs = op.find("outputs")) read_outputs(*outputs, id);
      if (auto collective = op.find("collective")) {
        if (!is_collective_class(work.op_class)) {
          collective->fail("an op of class " + std::string(kOpClassNames.name(work.op_class)) +
                           " cannot be a collective member");
        }
        add_collective_member(*collective, id);
      }
    }
    // Control edges may name ops defined later in the list.
    for (const JsonCursor& op : ops.elements()) {
      auto after = op.find("after");
      if (!after) continue;
      const OpId id = ops_.at(op.at("name").as_string());
      for (const JsonCursor& before : after->elements()) {
        const std::string name = before.as_string();
        auto it = ops_.find(name);
        if (it == ops_.end()) before.fail("unknown op '" + name + "'");
        if (it->second == id) before.fail("op '" + name + "' cannot run after itself");
        builder_.add_control_edge(it->second, id);
      }
    }
  }

  void read_inputs(const JsonCursor& inputs, OpId op) {
    std::unordered_set<TensorId> listed;
    for (const JsonCursor& input : inputs.elements()) {
      const TensorId tensor = tensor_named(input);
      if (!listed.insert(tensor).second) input.fail("tensor '" + input.as_string() + "' is listed twice");
      if (produced_by_.contains(tensor) && produced_by_.at(tensor) == op) {
        input.fail("op consumes its own output '" + input.as_string() + "'");
      }
      consumed_by_[tensor].push_back(op);
      builder_.add_input(op, tensor);
    }
  }

  void read_outputs(const JsonCursor& outputs, OpId op) {
    for (const JsonCursor& output : outputs.elements()) {
      const TensorId tensor = tensor_named(output);
      if (auto it = produced_by_.find(tensor); it != produced_by_.end()) {
        output.fail("tensor '" + output.as_string() + "' is already produced by another op");
      }
      for (OpId consumer : consumed_by_[tensor]) {
        if (consumer == op) output.fail("op consumes its own output '" + output.as_string() + "'");
      }
      produced_by_.emplace(tensor, op);
      builder_.add_output(op, tensor);
    }
  }

  void add_collective_member(const JsonCursor& json, OpId op) {
    const std::string name = json.as_string();
    auto [it, added] = collectives_.try_emplace(name);
    if (added) collective_order_.push_back(name);
    it->second.push_back(op);
    collective_paths_.try_emplace(name, json.path());
  }

  Graph build(const JsonCursor& ops) {
    for (const std::string& name : collective_order_) {
      try {
        builder_.add_collective(name, collectives_.at(name));
      } catch (const InputError& error) {
        throw InputError(collective_paths_.at(name) + ": " + error.what());
      }
    }
    try {
      return std::move(builder_).build();
    } catch (const InputError& error) {
      ops.fail(error.what());
    }
  }

  std::int64_t max_ops_ = 0;
  GraphBuilder builder_;
  std::map<std::string, std::pair<DeviceSpecId, DeviceSpec>, std::less<>> specs_;
  std::vector<DeviceKind> spec_kinds_;  // indexed by DeviceSpecId
  std::unordered_map<std::string, DeviceEntry> devices_;
  std::unordered_map<std::string, TensorId> tensors_;
  std::unordered_map<std::string, OpId> ops_;
  std::unordered_map<TensorId, OpId> produced_by_;
  std::unordered_map<TensorId, std::vector<OpId>> consumed_by_;
  std::unordered_map<std::string, std::vector<OpId>> collectives_;
  std::vector<std::string> collective_order_;
  std::unordered_map<std::string, std::string> collective_paths_;
};

}  // namespace

GraphScenario load_graph_scenario(const JsonCursor& root, std::int64_t max_ops) {
  return GraphScenarioReader(max_ops).read(root);
}

}  // namespace weft
