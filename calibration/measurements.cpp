#include "calibration/measurements.hpp"

#include <algorithm>

#include <fmt/format.h>

namespace weft {
namespace {

constexpr std::string_view kMeasurementsFormat = "weft-measurements";
// Version 2 added kernels, off-grid GEMMs, norm and optimizer measurements, and sources.
constexpr int kMeasurementsVersion = 2;
// A host that takes longer than this to issue one op is a measurement gone wrong.
constexpr double kMaxHostIssueNs = 1e7;

const std::vector<std::string_view> kGemmFields = {"m", "n", "k"};
// kv_heads is optional: without it, or equal to heads, the shape has six dimensions (multi-head).
const std::vector<std::string_view> kAttentionFields = {"batch",    "heads",  "queries", "keys",
                                                        "head_dim", "causal", "kv_heads"};
const std::vector<std::string_view> kMemoryFields = {"inputs", "outputs"};
const std::vector<std::string_view> kKernelRowFields = {"rows", "width"};
const std::vector<std::string_view> kParameterFields = {"parameters"};
// ranks_per_node: the members of the group on each node it spans (optional: all on one node).
const std::vector<std::string_view> kCommunicationFields = {"bytes", "group_size", "ranks_per_node"};

Kernel read_measured_kernel(const JsonCursor& json, OpClass op) {
  const auto kernel = json.find("kernel");
  if (!kernel) {
    if (op == OpClass::norm || op == OpClass::optimizer) {
      json.fail("missing required field 'kernel' (" + std::string(kOpClassNames.name(op)) +
                " measurements name the kernel they timed)");
    }
    return Kernel::any;
  }
  return read_kernel(*kernel, op);
}

// A measurement's "source": a key of the file's "sources".
std::string read_source_key(const JsonCursor& source, const std::vector<std::pair<std::string, std::string>>& sources) {
  std::string key = source.as_string();
  const bool known = std::any_of(sources.begin(), sources.end(), [&](const auto& s) { return s.first == key; });
  if (!known) source.fail("'" + key + "' is not a key of the file's \"sources\"");
  return key;
}

Measurement read_measurement(const JsonCursor& json, const std::vector<std::pair<std::string, std::string>>& sources) {
  json.expect_only({"op", "dtype", "kernel", "shape", "split", "grid", "samples_ns", "median_ns", "min_ns", "max_ns",
                    "spread", "source", "label"});
  Measurement m;
  const JsonCursor op = json.at("op");
  m.op = op.as_enum(kOpClassNames);
  if (!is_measured_op(m.op)) op.fail("'" + op.as_string() + "' is not a measured op");
  m.dtype = json.at("dtype").as_enum(kDtypeNames);
  m.kernel = read_measured_kernel(json, m.op);
  if (m.op == OpClass::optimizer && m.dtype != Dtype::fp32) {
    json.at("dtype").fail("the optimizer step runs on fp32 master weights: expected fp32");
  }
  const JsonCursor shape = json.at("shape");
  const auto& fields = measurement_shape_fields(m.op, m.kernel);
  for (const auto& [name, value] : shape.members()) {
    if (std::find(fields.begin(), fields.end(), name) == fields.end())
      value.fail("unknown shape field for " + op.as_string());
  }
  for (std::string_view field : fields) {
    if (field == "ranks_per_node" && !shape.find(field)) {
      m.shape.push_back(m.shape.at(1));  // a file from before placements: one node
      continue;
    }
    if (field == "kv_heads") {
      const auto kv_heads = shape.find(field);
      if (!kv_heads) continue;
      const std::int64_t value = kv_heads->as_positive_int();
      if (m.shape.at(1) % value != 0) {
        kv_heads->fail(fmt::format("expected a divisor of heads ({}): the key and value heads", m.shape.at(1)));
      }
      if (value != m.shape.at(1)) m.shape.push_back(value);
      continue;
    }
    const JsonCursor value = shape.at(field);
    m.shape.push_back(field == "causal" ? (value.as_bool() ? 1 : 0) : value.as_positive_int());
    if (field == "ranks_per_node" && (m.shape[2] > m.shape[1] || m.shape[1] % m.shape[2] != 0)) {
      value.fail(fmt::format("expected a divisor of group_size ({}): the group's ranks per node", m.shape[1]));
    }
  }
  if (auto split = json.find("split")) m.split = split->as_enum(kMeasurementSplitNames);
  if (auto grid = json.find("grid")) {
    if (m.op != OpClass::gemm) grid->fail("only GEMM measurements may lie off the grid");
    m.grid = grid->as_bool();
  }
  const JsonCursor samples = json.at("samples_ns");
  for (const JsonCursor& sample : samples.elements()) m.samples_ns.push_back(sample.as_positive_number());
  if (m.samples_ns.empty()) samples.fail("expected at least one sample");
  if (auto source = json.find("source")) m.source = read_source_key(*source, sources);
  if (auto label = json.find("label")) m.label = label->as_string();
  return m;
}

// The fields a host's issue time and a kernel gap share: "samples_ns", "source", "label" (and
// "median_ns", which is written for people and recomputed on reading).
template <typename Timed>
void read_timed_samples(const JsonCursor& json, const std::vector<std::pair<std::string, std::string>>& sources,
                        Timed& timed) {
  const JsonCursor samples = json.at("samples_ns");
  for (const JsonCursor& sample : samples.elements()) {
    const double ns = sample.as_nonnegative_number();
    if (ns > kMaxHostIssueNs) sample.fail("expected at most " + std::to_string(kMaxHostIssueNs) + " ns");
    timed.samples_ns.push_back(ns);
  }
  if (timed.samples_ns.empty()) samples.fail("expected at least one sample");
  if (auto source = json.find("source")) timed.source = read_source_key(*source, sources);
  if (auto label = json.find("label")) timed.label = label->as_string();
}

template <typename Timed>
nlohmann::json timed_samples_json(const Timed& timed) {
  nlohmann::json json = {{"samples_ns", timed.samples_ns}, {"median_ns", timed.median_ns()}};
  if (!timed.source.empty()) json["source"] = timed.source;
  if (!timed.label.empty()) json["label"] = timed.label;
  return json;
}

// {"op": class, "samples_ns": [...], "source": key, "label": text}
HostIssueMeasurement read_host_issue(const JsonCursor& json,
                                     const std::vector<std::pair<std::string, std::string>>& sources) {
  json.expect_only({"op", "samples_ns", "source", "label", "median_ns"});
  HostIssueMeasurement host;
  if (auto op = json.find("op")) {
    host.op = op->as_enum(kOpClassNames);
    if (host.op == OpClass::barrier) op->fail("a barrier issues nothing");
  }
  read_timed_samples(json, sources, host);
  return host;
}

// {"samples_ns": [...], "source": key, "label": text}
KernelGapMeasurement read_kernel_gap(const JsonCursor& json,
                                     const std::vector<std::pair<std::string, std::string>>& sources) {
  json.expect_only({"samples_ns", "source", "label", "median_ns"});
  KernelGapMeasurement gap;
  read_timed_samples(json, sources, gap);
  return gap;
}

// One measurement ({...}) or a list of them ([{...}, ...]), at most one per op class.
std::vector<HostIssueMeasurement> read_host_issues(const JsonCursor& json,
                                                   const std::vector<std::pair<std::string, std::string>>& sources) {
  if (json.is_object()) return {read_host_issue(json, sources)};
  std::vector<HostIssueMeasurement> hosts;
  for (const JsonCursor& element : json.elements()) {
    HostIssueMeasurement host = read_host_issue(element, sources);
    const bool repeated = std::any_of(hosts.begin(), hosts.end(), [&](const auto& h) { return h.op == host.op; });
    if (repeated) {
      element.fail(host.op ? "a second measurement of " + std::string(kOpClassNames.name(*host.op)) + " ops"
                           : std::string("a second measurement without an op class"));
    }
    hosts.push_back(std::move(host));
  }
  if (hosts.empty()) json.fail("expected at least one measurement");
  return hosts;
}

}  // namespace

std::int64_t Measurement::field(std::string_view name) const {
  const auto& fields = measurement_shape_fields(op, kernel);
  const auto index = static_cast<std::size_t>(std::find(fields.begin(), fields.end(), name) - fields.begin());
  // A communication shape without its placement is one node's: all of the group on it.
  if (name == "ranks_per_node" && index == shape.size()) return field("group_size");
  // Attention without kv_heads is multi-head: as many key and value heads as query heads.
  if (name == "kv_heads" && index == shape.size()) return field("heads");
  return shape.at(index);
}

bool is_measured_op(OpClass op) {
  switch (op) {
    case OpClass::gemm:
    case OpClass::attention_fwd:
    case OpClass::attention_bwd:
    case OpClass::elementwise:
    case OpClass::norm:
    case OpClass::optimizer:
    case OpClass::allreduce:
    case OpClass::allgather:
    case OpClass::reducescatter:
    case OpClass::alltoall:
    case OpClass::broadcast:
    case OpClass::send:
      return true;
    default:
      return false;
  }
}

const std::vector<std::string_view>& measurement_shape_fields(OpClass op, Kernel kernel) {
  switch (op) {
    case OpClass::gemm:
      return kGemmFields;
    case OpClass::attention_fwd:
    case OpClass::attention_bwd:
      return kAttentionFields;
    case OpClass::elementwise:
      return kernel == Kernel::any ? kMemoryFields : kKernelRowFields;
    case OpClass::norm:
      return kKernelRowFields;
    case OpClass::optimizer:
      return kParameterFields;
    default:
      return kCommunicationFields;
  }
}

MeasurementSet read_measurements(const JsonCursor& root) {
  root.expect_only({"format", "version", "backend", "device", "device_memory_bytes", "libraries", "timestamp", "ranks",
                    "ranks_per_node", "settings", "sources", "notes", "measurements", "host_issue", "kernel_gap"});
  const JsonCursor format = root.at("format");
  if (format.as_string() != kMeasurementsFormat)
    format.fail("expected \"" + std::string(kMeasurementsFormat) + "\" (a weft bench output)");
  const JsonCursor version = root.at("version");
  if (version.as_int() < 1 || version.as_int() > kMeasurementsVersion)
    version.fail("expected version 1 to " + std::to_string(kMeasurementsVersion));
  MeasurementSet set;
  const JsonCursor backend = root.at("backend");
  set.backend = backend.as_string();
  if (set.backend != "cpu" && set.backend != "cuda") backend.fail("expected \"cpu\" or \"cuda\"");
  set.device = root.at("device").as_string();
  if (set.device.empty()) root.at("device").fail("expected the device's name");
  if (auto memory = root.find("device_memory_bytes")) set.device_memory_bytes = memory->as_nonnegative_int();
  if (auto libraries = root.find("libraries")) {
    for (const auto& [name, value] : libraries->members()) set.libraries.emplace_back(name, value.as_string());
  }
  if (auto timestamp = root.find("timestamp")) set.timestamp = timestamp->as_string();
  if (auto ranks = root.find("ranks")) set.ranks = static_cast<int>(ranks->as_positive_int());
  if (auto per_node = root.find("ranks_per_node")) {
    set.ranks_per_node = static_cast<int>(per_node->as_positive_int());
    if (set.ranks % set.ranks_per_node != 0) per_node->fail(fmt::format("expected a divisor of ranks ({})", set.ranks));
  }
  if (auto settings = root.find("settings")) {
    settings->expect_only({"quick", "warmup", "samples", "sample_ms"});
    if (auto quick = settings->find("quick")) set.quick = quick->as_bool();
    if (auto warmup = settings->find("warmup")) set.warmup = static_cast<int>(warmup->as_nonnegative_int());
    if (auto samples = settings->find("samples")) set.samples = static_cast<int>(samples->as_nonnegative_int());
    if (auto sample_ms = settings->find("sample_ms")) set.sample_ms = sample_ms->as_positive_number();
  }
  if (auto sources = root.find("sources")) {
    for (const auto& [key, citation] : sources->members()) set.sources.emplace_back(key, citation.as_string());
  }
  if (auto notes = root.find("notes")) {
    for (const JsonCursor& note : notes->elements()) set.notes.push_back(note.as_string());
  }
  const JsonCursor measurements = root.at("measurements");
  for (const JsonCursor& element : measurements.elements()) {
    set.measurements.push_back(read_measurement(element, set.sources));
  }
  if (set.measurements.empty()) measurements.fail("expected at least one measurement (the suite is empty)");
  if (auto host = root.find("host_issue")) set.host_issue = read_host_issues(*host, set.sources);
  if (auto gap = root.find("kernel_gap")) set.kernel_gap = read_kernel_gap(*gap, set.sources);
  return set;
}

nlohmann::json measurements_json(const MeasurementSet& set) {
  nlohmann::json libraries = nlohmann::json::object();
  for (const auto& [name, version] : set.libraries) libraries[name] = version;
  nlohmann::json list = nlohmann::json::array();
  for (const Measurement& m : set.measurements) {
    nlohmann::json shape = nlohmann::json::object();
    const auto& fields = measurement_shape_fields(m.op, m.kernel);
    for (std::string_view field : fields) {
      const std::string name(field);
      if (name == "kv_heads" && m.shape.size() < fields.size()) continue;  // multi-head
      if (name == "causal") {
        shape[name] = m.field(field) != 0;
      } else {
        shape[name] = m.field(field);
      }
    }
    const SampleStats stats = sample_stats(m.samples_ns);
    nlohmann::json entry = {{"op", kOpClassNames.name(m.op)}, {"dtype", kDtypeNames.name(m.dtype)}};
    if (m.kernel != Kernel::any) entry["kernel"] = kKernelNames.name(m.kernel);
    entry["shape"] = shape;
    entry["split"] = kMeasurementSplitNames.name(m.split);
    if (!m.grid) entry["grid"] = false;
    if (!m.label.empty()) entry["label"] = m.label;
    if (!m.source.empty()) entry["source"] = m.source;
    entry["samples_ns"] = m.samples_ns;
    entry["median_ns"] = stats.median;
    entry["min_ns"] = stats.min;
    entry["max_ns"] = stats.max;
    entry["spread"] = stats.relative_spread();
    list.push_back(std::move(entry));
  }
  nlohmann::json json = {
      {"format", kMeasurementsFormat},
      {"version", kMeasurementsVersion},
      {"backend", set.backend},
      {"device", set.device},
      {"device_memory_bytes", set.device_memory_bytes},
      {"libraries", libraries},
      {"timestamp", set.timestamp},
      {"ranks", set.ranks},
      {"ranks_per_node", set.node_ranks()},
      {"settings",
       {{"quick", set.quick}, {"warmup", set.warmup}, {"samples", set.samples}, {"sample_ms", set.sample_ms}}},
      {"measurements", list}};
  if (!set.sources.empty()) {
    json["sources"] = nlohmann::json::object();
    for (const auto& [key, citation] : set.sources) json["sources"][key] = citation;
  }
  if (!set.notes.empty()) json["notes"] = set.notes;
  for (const HostIssueMeasurement& issue : set.host_issue) {
    nlohmann::json host = timed_samples_json(issue);
    if (issue.op) host["op"] = kOpClassNames.name(*issue.op);
    json["host_issue"].push_back(std::move(host));
  }
  if (set.kernel_gap) json["kernel_gap"] = timed_samples_json(*set.kernel_gap);
  return json;
}

}  // namespace weft
