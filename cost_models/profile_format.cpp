#include "cost_models/profile_format.hpp"

#include <limits>
#include <map>
#include <mutex>

#include "simulator/core/input_error.hpp"
#include "simulator/core/scenario_library.hpp"

namespace weft {
namespace {

using namespace profile_format;

LogGridTable read_table(const JsonCursor& json, const std::vector<std::string>& names) {
  const JsonCursor axes = json.at("axes");
  std::vector<std::vector<double>> coordinates;
  for (const std::string& name : names) {
    std::vector<double> axis;
    for (const JsonCursor& x : axes.at(name).elements()) axis.push_back(x.as_positive_number());
    coordinates.push_back(std::move(axis));
  }
  if (axes.members().size() != names.size()) axes.fail("expected " + std::to_string(names.size()) + " axes");
  std::vector<double> values;
  for (const JsonCursor& x : json.at("efficiency").elements()) values.push_back(x.as_positive_number());
  try {
    return LogGridTable(std::move(coordinates), std::move(values));
  } catch (const InputError& error) {
    json.fail(error.what());
  }
}

std::map<Dtype, double> read_rates(const JsonCursor& json) {
  std::map<Dtype, double> rates;
  for (const auto& [name, value] : json.members()) {
    const auto dtype = kDtypeNames.parse(name);
    if (!dtype) value.fail("unknown dtype (expected " + kDtypeNames.choices() + ")");
    rates[*dtype] = value.as_positive_number();
  }
  return rates;
}

Kernel read_optional_kernel(const JsonCursor& entry, const char* key, OpClass op_class) {
  const auto kernel = entry.find(key);
  return kernel ? read_kernel(*kernel, op_class) : Kernel::any;
}

Dtype read_dtype(const JsonCursor& entry, const std::map<Dtype, double>& rates, const char* rate_name) {
  const JsonCursor json = entry.at("dtype");
  const Dtype dtype = json.as_enum(kDtypeNames);
  if (!rates.contains(dtype)) json.fail(std::string("no ") + rate_name + " for this dtype");
  return dtype;
}

GemmEfficiency read_gemm(const JsonCursor& entry) {
  entry.expect_only({"dtype", "layout", "axes", "efficiency", "layout_factors", "points"});
  GemmEfficiency gemm;
  gemm.grid = read_table(entry, kGemmAxes);
  gemm.grid_layout = read_optional_kernel(entry, "layout", OpClass::gemm);
  if (auto factors = entry.find("layout_factors")) {
    for (const auto& [name, value] : factors->members()) {
      const auto layout = kKernelNames.parse(name);
      if (!layout || kernel_class(*layout) != OpClass::gemm) value.fail("'" + name + "' is not a GEMM layout");
      gemm.layout_factors[*layout] = value.as_positive_number();
    }
  }
  if (auto points = entry.find("points")) {
    for (const JsonCursor& point : points->elements()) {
      point.expect_only({"layout", "m", "n", "k", "efficiency"});
      const Kernel layout = read_optional_kernel(point, "layout", OpClass::gemm);
      gemm.points[{layout, point.at("m").as_positive_int(), point.at("n").as_positive_int(),
                   point.at("k").as_positive_int()}] = point.at("efficiency").as_positive_number();
    }
  }
  return gemm;
}

void read_attention(const JsonCursor& entry, CalibratedCostModel& model) {
  entry.expect_only({"op", "dtype", "causal", "kernel", "axes", "efficiency"});
  const JsonCursor op = entry.at("op");
  const OpClass pass = op.as_enum(kOpClassNames);
  if (pass != OpClass::attention_fwd && pass != OpClass::attention_bwd)
    op.fail("expected attention_fwd or attention_bwd");
  const Dtype dtype = read_dtype(entry, model.peak_flops(), "peak_flops");
  model.set_attention(pass, dtype, entry.at("causal").as_bool(), read_table(entry, kAttentionAxes),
                      read_optional_kernel(entry, "kernel", pass));
}

void read_memory_kernel(const JsonCursor& entry, CalibratedCostModel& model) {
  entry.expect_only({"kernel", "dtype", "axes", "efficiency"});
  const JsonCursor kernel_json = entry.at("kernel");
  const auto kernel = kKernelNames.parse(kernel_json.as_string());
  const OpClass home = kernel ? kernel_class(*kernel) : OpClass::other;
  if (home != OpClass::norm && home != OpClass::elementwise && home != OpClass::optimizer) {
    kernel_json.fail("'" + kernel_json.as_string() + "' is not a memory-bound kernel");
  }
  const Dtype dtype = read_dtype(entry, model.memory_bandwidth(), "memory_bandwidth");
  model.set_memory_kernel(*kernel, dtype, read_table(entry, memory_kernel_axes(*kernel)));
}

// Microseconds in the profile, nanoseconds in the model.
TimeNs read_microseconds_as_ns(const JsonCursor& json) {
  const double us = json.as_nonnegative_number();
  if (us > kMaxHostIssueUs) json.fail("expected at most " + std::to_string(kMaxHostIssueUs) + " us");
  return static_cast<TimeNs>(std::llround(us * 1e3));
}

AlphaBeta read_line(const JsonCursor& json) {
  const double bandwidth = json.at("bandwidth_GBps").as_nonnegative_number() * kBytesPerGB;
  return {json.at("latency_us").as_nonnegative_number() * 1e-6, bandwidth > 0.0 ? 1.0 / bandwidth : 0.0};
}

// One line ("latency_us", "bandwidth_GBps") for every size, or "regimes": lines in increasing
// size, each but the last up to its "up_to_bytes".
CommunicationFit read_communication_fit(const JsonCursor& entry) {
  const auto regimes = entry.find("regimes");
  if (!regimes) return read_line(entry);
  if (entry.find("latency_us") || entry.find("bandwidth_GBps")) {
    regimes->fail("expected either regimes or one latency_us and bandwidth_GBps, not both");
  }
  const std::vector<JsonCursor> lines = regimes->elements();
  if (lines.empty()) regimes->fail("expected at least one regime");
  CommunicationFit fit;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    const bool last = i + 1 == lines.size();
    lines[i].expect_only({"up_to_bytes", "latency_us", "bandwidth_GBps"});
    Bytes up_to = std::numeric_limits<Bytes>::max();
    if (const auto bound = lines[i].find("up_to_bytes")) {
      if (last) bound->fail("the last regime covers every larger size: expected no up_to_bytes");
      up_to = bound->as_positive_int();
      if (!fit.regimes.empty() && up_to <= fit.regimes.back().up_to) {
        bound->fail("expected more than the previous regime's " + std::to_string(fit.regimes.back().up_to));
      }
    } else if (!last) {
      lines[i].fail("missing required field 'up_to_bytes' (every regime but the last has one)");
    }
    fit.regimes.push_back({up_to, read_line(lines[i])});
  }
  return fit;
}

}  // namespace

std::shared_ptr<const CalibratedCostModel> read_profile(const JsonCursor& root) {
  root.expect_only({"format", "version", "backend", "device", "created", "measurements", "peak_flops",
                    "memory_bandwidth", "gemm", "attention", "memory_bound", "memory_kernels", "communication",
                    "holdout", "host_issue_us", "host_issue_us_by_op", "kernel_gap_us"});
  const JsonCursor format = root.at("format");
  if (format.as_string() != kFormat) format.fail("expected \"" + std::string(kFormat) + "\" (a weft calibrate output)");
  const JsonCursor version = root.at("version");
  if (version.as_int() < 1 || version.as_int() > kVersion) {
    version.fail("expected version 1 to " + std::to_string(kVersion));
  }
  auto model = std::make_shared<CalibratedCostModel>(root.at("device").as_string());
  for (const auto& [dtype, rate] : read_rates(root.at("peak_flops"))) model->set_peak_flops(dtype, rate);
  for (const auto& [dtype, rate] : read_rates(root.at("memory_bandwidth"))) model->set_memory_bandwidth(dtype, rate);
  if (auto host = root.find("host_issue_us")) model->set_host_issue_ns(std::nullopt, read_microseconds_as_ns(*host));
  if (auto by_op = root.find("host_issue_us_by_op")) {
    for (const auto& [name, host] : by_op->members()) {
      const auto op = kOpClassNames.parse(name);
      if (!op) host.fail("unknown op class (expected " + kOpClassNames.choices() + ")");
      model->set_host_issue_ns(*op, read_microseconds_as_ns(host));
    }
  }
  if (auto gap = root.find("kernel_gap_us")) model->set_kernel_gap_ns(read_microseconds_as_ns(*gap));
  for (const JsonCursor& entry : root.at("gemm").elements()) {
    const Dtype dtype = read_dtype(entry, model->peak_flops(), "peak_flops");
    model->set_gemm(dtype, read_gemm(entry));
  }
  for (const JsonCursor& entry : root.at("attention").elements()) read_attention(entry, *model);
  for (const JsonCursor& entry : root.at("memory_bound").elements()) {
    entry.expect_only({"dtype", "axes", "efficiency"});
    model->set_memory_bound(read_dtype(entry, model->memory_bandwidth(), "memory_bandwidth"),
                            read_table(entry, kMemoryAxes));
  }
  if (auto kernels = root.find("memory_kernels")) {
    for (const JsonCursor& entry : kernels->elements()) read_memory_kernel(entry, *model);
  }
  for (const JsonCursor& entry : root.at("communication").elements()) {
    entry.expect_only({"op", "group_size", "ranks_per_node", "latency_us", "bandwidth_GBps", "regimes"});
    const JsonCursor op = entry.at("op");
    const OpClass op_class = op.as_enum(kOpClassNames);
    if (category_of(op_class) != OpCategory::communication) op.fail("expected a communication op");
    const int group_size = static_cast<int>(entry.at("group_size").as_positive_int());
    int ranks_per_node = group_size;  // a profile from before placements: one node
    if (auto per_node = entry.find("ranks_per_node")) {
      ranks_per_node = static_cast<int>(per_node->as_positive_int());
      if (ranks_per_node > group_size || group_size % ranks_per_node != 0) {
        per_node->fail("expected a divisor of group_size (" + std::to_string(group_size) + ")");
      }
    }
    model->set_communication(op_class, group_size, ranks_per_node, read_communication_fit(entry));
  }
  return model;
}

std::shared_ptr<const CalibratedCostModel> load_bundled_profile(const JsonCursor& name) {
  std::string file;
  try {
    file = ScenarioLibrary::find("profiles", name.as_string(), "calibration profile").string();
  } catch (const InputError& error) {
    name.fail(error.what());
  }
  // Every scenario on a bundled GPU reads its profile: read each file once per process.
  static std::mutex mutex;
  static std::map<std::string, std::shared_ptr<const CalibratedCostModel>> loaded;
  const std::lock_guard lock(mutex);
  auto& model = loaded[file];
  if (model) return model;
  const JsonDocument document = JsonDocument::parse_file(file);
  try {
    model = read_profile(document.root());
  } catch (const InputError& error) {
    throw InputError(file + ": " + error.what());
  }
  return model;
}

}  // namespace weft
