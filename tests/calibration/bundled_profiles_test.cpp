#include <algorithm>
#include <cmath>
#include <map>
#include <tuple>
#include <vector>

#include <catch2/catch.hpp>

#include "calibration/calibrate.hpp"
#include "calibration/measurement_work.hpp"
#include "calibration/profile_io.hpp"
#include "cost_models/cluster_cost_model.hpp"
#include "simulator/core/scenario_library.hpp"

namespace weft {
namespace {

// The bundled measurement files (scenarios/measurements/) and the profiles weft calibrate made of
// them (scenarios/profiles/), which the bundled clusters use by default.
const std::vector<std::string> kBundledDevices = {"h100-sxm", "h200"};

std::string measurement_file(const std::string& device) { return "scenarios/measurements/" + device + ".json"; }

MeasurementSet read_bundled_measurements(const std::string& device) {
  const JsonDocument document = JsonDocument::parse_file(ScenarioLibrary::root() / "measurements" / (device + ".json"));
  return read_measurements(document.root());
}

ClusterSpec bundled_cluster_with(const std::string& device) {
  const nlohmann::json spec = {{"base", "dgx-h100"}, {"gpu", device}, {"gpus", 8}};
  return load_cluster_spec(JsonCursor(spec, "cluster"));
}

// The fastest and slowest time measured for each op, kernel, dtype and shape: where a shape was
// measured more than once (the same GEMM in two models' layers), no model can be closer to every
// repeat than the repeats are to each other.
std::map<std::tuple<OpClass, Kernel, Dtype, std::vector<std::int64_t>>, std::pair<double, double>> repeat_ranges(
    const MeasurementSet& set) {
  std::map<std::tuple<OpClass, Kernel, Dtype, std::vector<std::int64_t>>, std::pair<double, double>> ranges;
  for (const Measurement& m : set.measurements) {
    const auto [it, inserted] = ranges.try_emplace({m.op, m.kernel, m.dtype, m.shape}, m.median_s(), m.median_s());
    it->second.first = std::min(it->second.first, m.median_s());
    it->second.second = std::max(it->second.second, m.median_s());
  }
  return ranges;
}

TEST_CASE("the shipped profiles of the measured GPUs cost every measured kernel within 10%, the median within 5%",
          "[calibration][bundled]") {
  // The H100's and the H200's files are kernels measured on the GPU itself (the others are derived).
  const std::string device = GENERATE(as<std::string>{}, "h100-sxm", "h200");
  INFO(device);
  const MeasurementSet set = read_bundled_measurements(device);
  ClusterCostModel cost(bundled_cluster_with(device));
  REQUIRE(cost.cluster().calibration != nullptr);
  const auto ranges = repeat_ranges(set);
  std::vector<double> errors;
  for (const Measurement& m : set.measurements) {
    const double measured = m.median_s();
    const double predicted = predicted_seconds(m, cost);
    const double error = std::abs(predicted - measured) / measured;
    const auto [fastest, slowest] = ranges.at({m.op, m.kernel, m.dtype, m.shape});
    INFO(m.label << " (" << kOpClassNames.name(m.op) << " " << kKernelNames.name(m.kernel) << "): " << predicted * 1e6
                 << " us predicted, " << measured * 1e6 << " us measured, repeats " << fastest * 1e6 << " - "
                 << slowest * 1e6 << " us");
    CHECK((error <= 0.10 || (predicted >= fastest && predicted <= slowest)));
    errors.push_back(error);
  }
  REQUIRE(errors.size() > 500);
  std::nth_element(errors.begin(), errors.begin() + static_cast<std::ptrdiff_t>(errors.size() / 2), errors.end());
  CHECK(errors[errors.size() / 2] <= 0.05);
}

TEST_CASE("the roofline defaults miss the H100's kernels the profile fixes", "[calibration][bundled]") {
  // Without the profile, the datasheet peaks and the cluster's efficiencies cost GEMMs at one
  // rate whatever their shape: the profile's replay above is what the measurements add.
  const MeasurementSet set = read_bundled_measurements("h100-sxm");
  nlohmann::json spec = {{"base", "dgx-h100"}, {"gpus", 8}, {"calibration", "none"}};
  ClusterCostModel cost(load_cluster_spec(JsonCursor(spec, "cluster")));
  REQUIRE(cost.cluster().calibration == nullptr);
  int off_by_more_than_10_percent = 0;
  for (const Measurement& m : set.measurements) {
    const double measured = m.median_s();
    if (std::abs(predicted_seconds(m, cost) - measured) / measured > 0.10) ++off_by_more_than_10_percent;
  }
  CHECK(off_by_more_than_10_percent > static_cast<int>(set.measurements.size()) / 2);
}

TEST_CASE("the bundled profiles are what weft calibrate makes of the bundled measurements", "[calibration][bundled]") {
  for (const std::string& device : kBundledDevices) {
    INFO(device);
    const Calibration calibration = calibrate({{measurement_file(device), read_bundled_measurements(device)}});
    nlohmann::json fitted = profile_json(calibration, "");
    const JsonDocument shipped = JsonDocument::parse_file(ScenarioLibrary::root() / "profiles" / (device + ".json"));
    nlohmann::json committed = shipped.root().json();
    fitted.erase("created");
    committed.erase("created");
    // On failure: regenerate with `weft calibrate scenarios/measurements/<device>.json -o
    // scenarios/profiles/<device>.json` from the repository's root.
    CHECK(fitted == committed);
  }
}

}  // namespace
}  // namespace weft
