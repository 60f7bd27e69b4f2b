#include "calibration/profile_io.hpp"

#include <string>

namespace weft {
namespace {

constexpr std::string_view kProfileFormat = "weft-profile";
constexpr int kProfileVersion = 1;

const std::vector<std::string> kGemmAxes = {"m", "n", "k"};
const std::vector<std::string> kAttentionAxes = {"batch_heads", "sequence", "head_dim"};
const std::vector<std::string> kMemoryAxes = {"bytes"};

nlohmann::json table_json(const LogGridTable& table, const std::vector<std::string>& names) {
  nlohmann::json axes = nlohmann::json::object();
  for (std::size_t a = 0; a < names.size(); ++a) axes[names[a]] = table.axes()[a];
  return {{"axes", axes}, {"efficiency", table.values()}};
}

nlohmann::json rates_json(const std::map<Dtype, double>& rates) {
  nlohmann::json out = nlohmann::json::object();
  for (const auto& [dtype, rate] : rates) out[std::string(kDtypeNames.name(dtype))] = rate;
  return out;
}

nlohmann::json holdout_json(const std::vector<HoldoutErrors>& groups) {
  nlohmann::json out = nlohmann::json::array();
  for (const HoldoutErrors& g : groups) {
    out.push_back({{"group", g.group},
                   {"count", g.count},
                   {"default_mean_abs_error", g.default_mean_abs},
                   {"default_max_abs_error", g.default_max_abs},
                   {"fitted_mean_abs_error", g.fitted_mean_abs},
                   {"fitted_max_abs_error", g.fitted_max_abs}});
  }
  return out;
}

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

}  // namespace

nlohmann::json profile_json(const Calibration& calibration, const std::string& created) {
  const CalibratedCostModel& model = *calibration.model;
  nlohmann::json gemm = nlohmann::json::array();
  for (const auto& [dtype, table] : model.gemm()) {
    nlohmann::json entry = table_json(table, kGemmAxes);
    entry["dtype"] = kDtypeNames.name(dtype);
    gemm.push_back(entry);
  }
  nlohmann::json attention = nlohmann::json::array();
  for (const auto& [key, table] : model.attention()) {
    const auto& [pass, dtype, causal] = key;
    nlohmann::json entry = table_json(table, kAttentionAxes);
    entry["op"] = kOpClassNames.name(pass);
    entry["dtype"] = kDtypeNames.name(dtype);
    entry["causal"] = causal;
    attention.push_back(entry);
  }
  nlohmann::json memory = nlohmann::json::array();
  for (const auto& [dtype, table] : model.memory_bound()) {
    nlohmann::json entry = table_json(table, kMemoryAxes);
    entry["dtype"] = kDtypeNames.name(dtype);
    memory.push_back(entry);
  }
  nlohmann::json communication = nlohmann::json::array();
  for (const auto& [key, fit] : model.communication()) {
    communication.push_back(
        {{"op", kOpClassNames.name(key.first)},
         {"group_size", key.second},
         {"latency_us", fit.latency_s * 1e6},
         {"bandwidth_GBps", fit.seconds_per_byte > 0.0 ? 1.0 / fit.seconds_per_byte / kBytesPerGB : 0.0}});
  }
  return {{"format", kProfileFormat},
          {"version", kProfileVersion},
          {"backend", calibration.measurements.backend},
          {"device", model.device()},
          {"created", created},
          {"measurements", calibration.sources},
          {"peak_flops", rates_json(model.peak_flops())},
          {"memory_bandwidth", rates_json(model.memory_bandwidth())},
          {"gemm", gemm},
          {"attention", attention},
          {"memory_bound", memory},
          {"communication", communication},
          {"holdout", holdout_json(calibration.holdout)}};
}

std::shared_ptr<const CalibratedCostModel> read_profile(const JsonCursor& root) {
  root.expect_only({"format", "version", "backend", "device", "created", "measurements", "peak_flops",
                    "memory_bandwidth", "gemm", "attention", "memory_bound", "communication", "holdout"});
  const JsonCursor format = root.at("format");
  if (format.as_string() != kProfileFormat)
    format.fail("expected \"" + std::string(kProfileFormat) + "\" (a weft calibrate output)");
  const JsonCursor version = root.at("version");
  if (version.as_int() != kProfileVersion) version.fail("expected version " + std::to_string(kProfileVersion));
  auto model = std::make_shared<CalibratedCostModel>(root.at("device").as_string());
  for (const auto& [dtype, rate] : read_rates(root.at("peak_flops"))) model->set_peak_flops(dtype, rate);
  for (const auto& [dtype, rate] : read_rates(root.at("memory_bandwidth"))) model->set_memory_bandwidth(dtype, rate);
  for (const JsonCursor& entry : root.at("gemm").elements()) {
    entry.expect_only({"dtype", "axes", "efficiency"});
    const Dtype dtype = entry.at("dtype").as_enum(kDtypeNames);
    if (!model->peak_flops().contains(dtype)) entry.at("dtype").fail("no peak_flops for this dtype");
    model->set_gemm(dtype, read_table(entry, kGemmAxes));
  }
  for (const JsonCursor& entry : root.at("attention").elements()) {
    entry.expect_only({"op", "dtype", "causal", "axes", "efficiency"});
    const JsonCursor op = entry.at("op");
    const OpClass pass = op.as_enum(kOpClassNames);
    if (pass != OpClass::attention_fwd && pass != OpClass::attention_bwd)
      op.fail("expected attention_fwd or attention_bwd");
    const Dtype dtype = entry.at("dtype").as_enum(kDtypeNames);
    if (!model->peak_flops().contains(dtype)) entry.at("dtype").fail("no peak_flops for this dtype");
    model->set_attention(pass, dtype, entry.at("causal").as_bool(), read_table(entry, kAttentionAxes));
  }
  for (const JsonCursor& entry : root.at("memory_bound").elements()) {
    entry.expect_only({"dtype", "axes", "efficiency"});
    const Dtype dtype = entry.at("dtype").as_enum(kDtypeNames);
    if (!model->memory_bandwidth().contains(dtype)) entry.at("dtype").fail("no memory_bandwidth for this dtype");
    model->set_memory_bound(dtype, read_table(entry, kMemoryAxes));
  }
  for (const JsonCursor& entry : root.at("communication").elements()) {
    entry.expect_only({"op", "group_size", "latency_us", "bandwidth_GBps"});
    const JsonCursor op = entry.at("op");
    const OpClass op_class = op.as_enum(kOpClassNames);
    if (category_of(op_class) != OpCategory::communication) op.fail("expected a communication op");
    const double bandwidth = entry.at("bandwidth_GBps").as_nonnegative_number() * kBytesPerGB;
    model->set_communication(
        op_class, static_cast<int>(entry.at("group_size").as_positive_int()),
        {entry.at("latency_us").as_nonnegative_number() * 1e-6, bandwidth > 0.0 ? 1.0 / bandwidth : 0.0});
  }
  return model;
}

}  // namespace weft
