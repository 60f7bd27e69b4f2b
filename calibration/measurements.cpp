#include "calibration/measurements.hpp"

#include <algorithm>

namespace weft {
namespace {

constexpr std::string_view kMeasurementsFormat = "weft-measurements";
constexpr int kMeasurementsVersion = 1;

const std::vector<std::string_view> kGemmFields = {"m", "n", "k"};
const std::vector<std::string_view> kAttentionFields = {"batch", "heads", "queries", "keys", "head_dim", "causal"};
const std::vector<std::string_view> kMemoryFields = {"inputs", "outputs"};
const std::vector<std::string_view> kCommunicationFields = {"bytes", "group_size"};

Measurement read_measurement(const JsonCursor& json) {
  json.expect_only({"op", "dtype", "shape", "split", "samples_ns", "median_ns", "min_ns", "max_ns", "spread"});
  Measurement m;
  const JsonCursor op = json.at("op");
  m.op = op.as_enum(kOpClassNames);
  if (!is_measured_op(m.op)) op.fail("'" + op.as_string() + "' is not a measured op");
  m.dtype = json.at("dtype").as_enum(kDtypeNames);
  const JsonCursor shape = json.at("shape");
  const auto& fields = measurement_shape_fields(m.op);
  for (const auto& [name, value] : shape.members()) {
    if (std::find(fields.begin(), fields.end(), name) == fields.end())
      value.fail("unknown shape field for " + op.as_string());
  }
  for (std::string_view field : fields) {
    const JsonCursor value = shape.at(field);
    m.shape.push_back(field == "causal" ? (value.as_bool() ? 1 : 0) : value.as_positive_int());
  }
  if (auto split = json.find("split")) m.split = split->as_enum(kMeasurementSplitNames);
  const JsonCursor samples = json.at("samples_ns");
  for (const JsonCursor& sample : samples.elements()) m.samples_ns.push_back(sample.as_positive_number());
  if (m.samples_ns.empty()) samples.fail("expected at least one sample");
  return m;
}

}  // namespace

std::int64_t Measurement::field(std::string_view name) const {
  const auto& fields = measurement_shape_fields(op);
  const auto it = std::find(fields.begin(), fields.end(), name);
  return shape.at(static_cast<std::size_t>(it - fields.begin()));
}

bool is_measured_op(OpClass op) {
  switch (op) {
    case OpClass::gemm:
    case OpClass::attention_fwd:
    case OpClass::attention_bwd:
    case OpClass::elementwise:
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

const std::vector<std::string_view>& measurement_shape_fields(OpClass op) {
  switch (op) {
    case OpClass::gemm:
      return kGemmFields;
    case OpClass::attention_fwd:
    case OpClass::attention_bwd:
      return kAttentionFields;
    case OpClass::elementwise:
      return kMemoryFields;
    default:
      return kCommunicationFields;
  }
}

MeasurementSet read_measurements(const JsonCursor& root) {
  root.expect_only({"format", "version", "backend", "device", "device_memory_bytes", "libraries", "timestamp", "ranks",
                    "settings", "measurements"});
  const JsonCursor format = root.at("format");
  if (format.as_string() != kMeasurementsFormat)
    format.fail("expected \"" + std::string(kMeasurementsFormat) + "\" (a weft bench output)");
  const JsonCursor version = root.at("version");
  if (version.as_int() != kMeasurementsVersion)
    version.fail("expected version " + std::to_string(kMeasurementsVersion));
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
  if (auto settings = root.find("settings")) {
    settings->expect_only({"quick", "warmup", "samples"});
    if (auto quick = settings->find("quick")) set.quick = quick->as_bool();
    if (auto warmup = settings->find("warmup")) set.warmup = static_cast<int>(warmup->as_nonnegative_int());
    if (auto samples = settings->find("samples")) set.samples = static_cast<int>(samples->as_nonnegative_int());
  }
  const JsonCursor measurements = root.at("measurements");
  for (const JsonCursor& element : measurements.elements()) set.measurements.push_back(read_measurement(element));
  if (set.measurements.empty()) measurements.fail("expected at least one measurement (the suite is empty)");
  return set;
}

nlohmann::json measurements_json(const MeasurementSet& set) {
  nlohmann::json libraries = nlohmann::json::object();
  for (const auto& [name, version] : set.libraries) libraries[name] = version;
  nlohmann::json list = nlohmann::json::array();
  for (const Measurement& m : set.measurements) {
    nlohmann::json shape = nlohmann::json::object();
    const auto& fields = measurement_shape_fields(m.op);
    for (std::size_t i = 0; i < fields.size(); ++i) {
      const std::string name(fields[i]);
      if (name == "causal") {
        shape[name] = m.shape[i] != 0;
      } else {
        shape[name] = m.shape[i];
      }
    }
    const SampleStats stats = sample_stats(m.samples_ns);
    list.push_back({{"op", kOpClassNames.name(m.op)},
                    {"dtype", kDtypeNames.name(m.dtype)},
                    {"shape", shape},
                    {"split", kMeasurementSplitNames.name(m.split)},
                    {"samples_ns", m.samples_ns},
                    {"median_ns", stats.median},
                    {"min_ns", stats.min},
                    {"max_ns", stats.max},
                    {"spread", stats.relative_spread()}});
  }
  return {{"format", kMeasurementsFormat},
          {"version", kMeasurementsVersion},
          {"backend", set.backend},
          {"device", set.device},
          {"device_memory_bytes", set.device_memory_bytes},
          {"libraries", libraries},
          {"timestamp", set.timestamp},
          {"ranks", set.ranks},
          {"settings", {{"quick", set.quick}, {"warmup", set.warmup}, {"samples", set.samples}}},
          {"measurements", list}};
}

}  // namespace weft
