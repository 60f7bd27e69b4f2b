// Calibration on synthetic measurements drawn from a known model with noise.
#include <catch2/catch.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <random>

#include "calibration/calibrate.hpp"
#include "calibration/profile_io.hpp"
#include "cost_models/profile_format.hpp"
#include "simulator/core/input_error.hpp"

namespace weft {
namespace {

constexpr double kPeak = 1e12;       // FLOP/s the efficiencies are fractions of
constexpr double kBandwidth = 20e9;  // bytes/s
constexpr double kNoise = 0.02;      // relative, uniform, on every sample

// The known model: GEMM efficiency linear in the logarithm of each dimension (so that the
// multilinear table through the grid represents it exactly), from 0.1 to 0.5.
double gemm_efficiency(double m, double n, double k) {
  auto unit = [](double x) { return std::log(x / 64.0) / std::log(16.0); };
  return 0.1 + 0.2 * unit(m) + 0.15 * unit(n) + 0.05 * unit(k);
}

double memory_efficiency(double bytes) { return 0.2 + 0.6 * std::log(bytes / 4096.0) / std::log(1 << 14); }

const AlphaBeta kAllreduce{10e-6, 1.0 / 8e9};

const std::vector<std::array<std::int64_t, 3>> kHeldOutGemms = {{100, 700, 90}, {500, 128, 1000}, {80, 80, 300}};

struct Synthetic {
  std::mt19937 generator{7};
  MeasurementSet set;

  Synthetic() {
    set.backend = "cpu";
    set.device = "synthetic";
    set.ranks = 2;
  }

  void add(OpClass op, std::vector<std::int64_t> shape, double seconds, MeasurementSplit split) {
    std::uniform_real_distribution<double> jitter(-kNoise, kNoise);
    std::vector<double> samples;
    for (int i = 0; i < 5; ++i) samples.push_back(seconds * 1e9 * (1.0 + jitter(generator)));
    set.measurements.push_back(
        {.op = op, .dtype = Dtype::bf16, .shape = std::move(shape), .split = split, .samples_ns = std::move(samples)});
  }

  void add_gemm(std::int64_t m, std::int64_t n, std::int64_t k, MeasurementSplit split) {
    const double e = gemm_efficiency(static_cast<double>(m), static_cast<double>(n), static_cast<double>(k));
    add(OpClass::gemm, {m, n, k}, 2.0 * static_cast<double>(m * n * k) / (e * kPeak), split);
  }
};

MeasurementSet synthetic_measurements() {
  Synthetic s;
  const std::vector<std::int64_t> axis = {64, 256, 1024};
  for (std::int64_t m : axis) {
    for (std::int64_t n : axis) {
      for (std::int64_t k : axis) s.add_gemm(m, n, k, MeasurementSplit::fit);
    }
  }
  for (const auto& [m, n, k] : kHeldOutGemms) s.add_gemm(m, n, k, MeasurementSplit::holdout);
  for (std::int64_t bytes = 4096; bytes <= (std::int64_t{4096} << 14); bytes *= 4) {
    const std::int64_t elements = bytes / 2;
    s.add(OpClass::elementwise, {elements / 2, elements / 2},
          static_cast<double>(bytes) / (memory_efficiency(static_cast<double>(bytes)) * kBandwidth),
          MeasurementSplit::fit);
  }
  for (std::int64_t bytes = 1024; bytes <= (64 << 20); bytes *= 4) {
    s.add(OpClass::allreduce, {bytes, 2}, kAllreduce.seconds(bytes), MeasurementSplit::fit);
    s.add(OpClass::allreduce, {bytes * 2, 2}, kAllreduce.seconds(bytes * 2), MeasurementSplit::holdout);
  }
  return s.set;
}

TEST_CASE("calibration recovers a known model from noisy measurements", "[calibration]") {
  const Calibration calibration = calibrate({{"synthetic.json", synthetic_measurements()}});
  const CalibratedCostModel& model = *calibration.model;
  // The reference peak is the best rate measured: the top efficiency, 0.5, of the true peak.
  const double peak = model.peak_flops().at(Dtype::bf16);
  CHECK(peak == Approx(0.5 * kPeak).epsilon(2 * kNoise));
  // Fitted efficiency x reference peak is the true rate at every grid point.
  const LogGridTable& table = model.gemm().at(Dtype::bf16).grid;
  for (double m : {64.0, 256.0, 1024.0}) {
    for (double n : {64.0, 256.0, 1024.0}) {
      const std::array<double, 3> point = {m, n, 64.0};
      CHECK(table.at(point) * peak == Approx(gemm_efficiency(m, n, 64.0) * kPeak).epsilon(2 * kNoise));
    }
  }
  const LogGridTable& memory = model.memory_bound().at(Dtype::bf16);
  const std::array<double, 1> bytes = {65536.0};
  CHECK(memory.at(bytes) * model.memory_bandwidth().at(Dtype::bf16) ==
        Approx(memory_efficiency(65536.0) * kBandwidth).epsilon(2 * kNoise));
  // One latency-bandwidth line explains the noisy measurements: one regime.
  const CommunicationFit& fits = model.communication().at({OpClass::allreduce, 2, 2});
  REQUIRE(fits.regimes.size() == 1);
  const AlphaBeta fit = fits.regimes.front().fit;
  CHECK(fit.latency_s == Approx(kAllreduce.latency_s).epsilon(0.05));
  CHECK(fit.seconds_per_byte == Approx(kAllreduce.seconds_per_byte).epsilon(0.05));

  // Held out: the fit predicts within the noise; the default model runs every GEMM at the best
  // rate seen (efficiency 0.5), so it is off by 1 - e / 0.5 on a shape of efficiency e.
  double default_error = 0.0;
  for (const auto& [m, n, k] : kHeldOutGemms) {
    default_error +=
        1.0 - gemm_efficiency(static_cast<double>(m), static_cast<double>(n), static_cast<double>(k)) / 0.5;
  }
  default_error /= static_cast<double>(kHeldOutGemms.size());
  for (const HoldoutErrors& group : calibration.holdout) {
    INFO(group.group);
    CHECK(group.fitted_mean_abs < 0.03);
  }
  const auto gemm = std::find_if(calibration.holdout.begin(), calibration.holdout.end(),
                                 [](const HoldoutErrors& group) { return group.group == "gemm bf16"; });
  REQUIRE(gemm != calibration.holdout.end());
  CHECK(gemm->default_mean_abs == Approx(default_error).margin(0.03));
  CHECK(calibration.holdout.size() == 2);
}

TEST_CASE("GEMMs off the grid give their layout's factor and cost their own shapes exactly", "[calibration]") {
  Synthetic s;
  const std::vector<std::int64_t> axis = {64, 256, 1024};
  for (std::int64_t m : axis) {
    for (std::int64_t n : axis) {
      for (std::int64_t k : axis) s.add_gemm(m, n, k, MeasurementSplit::fit);
    }
  }
  for (Measurement& m : s.set.measurements) m.kernel = Kernel::nn;
  // Weight-gradient GEMMs (tn) run at 0.8 of the grid's efficiency, off the grid's points.
  for (const auto& [m, n, k] : kHeldOutGemms) {
    s.add_gemm(m, n, k, MeasurementSplit::fit);
    Measurement& off = s.set.measurements.back();
    off.kernel = Kernel::tn;
    off.grid = false;
    for (double& sample : off.samples_ns) sample /= 0.8;
  }
  s.add(OpClass::elementwise, {1 << 20, 1 << 20}, 4.0 * (1 << 20) / kBandwidth, MeasurementSplit::fit);
  const Calibration calibration = calibrate({{"layouts.json", s.set}});
  const GemmEfficiency& gemm = calibration.model->gemm().at(Dtype::bf16);
  CHECK(gemm.grid_layout == Kernel::nn);
  CHECK(gemm.layout_factors.at(Kernel::tn) == Approx(0.8).epsilon(3 * kNoise));
  CHECK_FALSE(gemm.layout_factors.contains(Kernel::nn));
  REQUIRE(gemm.points.size() == kHeldOutGemms.size());
  const double peak = calibration.model->peak_flops().at(Dtype::bf16);
  for (const auto& [m, n, k] : kHeldOutGemms) {
    const Measurement* measured = nullptr;
    for (const Measurement& candidate : s.set.measurements) {
      if (!candidate.grid && candidate.shape == std::vector<std::int64_t>{m, n, k}) measured = &candidate;
    }
    REQUIRE(measured != nullptr);
    const std::vector<std::int64_t> shape = {m, n, k};
    CHECK(gemm.at(Kernel::tn, shape) * peak == Approx(2.0 * static_cast<double>(m * n * k) / measured->median_s()));
  }
  // Each tn point predicted from the others: the grid and the factor of the other two points.
  const auto loo = std::find_if(calibration.holdout.begin(), calibration.holdout.end(),
                                [](const HoldoutErrors& g) { return g.group == "gemm bf16 tn (leave one out)"; });
  REQUIRE(loo != calibration.holdout.end());
  CHECK(loo->count == 3);
  CHECK(loo->fitted_max_abs < 4 * kNoise);
}

TEST_CASE("memory-bound kernels get tables over their rows and width, gaps from the nearest shapes", "[calibration]") {
  Synthetic s;
  // A layernorm that moves 2 x rows x width bf16 elements at 0.5 of the bandwidth below width 4096
  // and 0.25 from there on; one shape (4096 x 4096) was left out.
  for (std::int64_t rows : {1024, 4096, 16384}) {
    for (std::int64_t width : {1024, 4096}) {
      if (rows == 4096 && width == 4096) continue;
      const double bytes = 2.0 * 2.0 * static_cast<double>(rows * width);
      const double seconds = bytes / ((width < 4096 ? 0.5 : 0.25) * kBandwidth);
      s.add(OpClass::norm, {rows, width}, seconds, MeasurementSplit::fit);
      s.set.measurements.back().kernel = Kernel::layernorm_fwd;
    }
  }
  const Calibration calibration = calibrate({{"norms.json", s.set}});
  const LogGridTable& table = calibration.model->memory_kernels().at({Kernel::layernorm_fwd, Dtype::bf16});
  const double bandwidth = calibration.model->memory_bandwidth().at(Dtype::bf16);
  const std::array<double, 2> narrow = {16384.0, 1024.0};
  const std::array<double, 2> wide = {16384.0, 4096.0};
  CHECK(table.at(narrow) * bandwidth == Approx(0.5 * kBandwidth).epsilon(2 * kNoise));
  CHECK(table.at(wide) * bandwidth == Approx(0.25 * kBandwidth).epsilon(2 * kNoise));
  // The missing shape's nearest measured shapes are (1024, 4096) and (16384, 4096), both 0.25,
  // two octaves away in rows; (4096, 1024) is two octaves away in width.
  const std::array<double, 2> gap = {4096.0, 4096.0};
  CHECK(table.at(gap) * bandwidth == Approx((0.25 + 0.25 + 0.5) / 3 * kBandwidth).epsilon(2 * kNoise));
}

TEST_CASE("communication bent by a protocol switch is fitted per regime, and the profile keeps the regimes",
          "[calibration]") {
  MeasurementSet set = synthetic_measurements();
  // An all-gather over 2 ranks: 3 us + bytes / 2 GB/s up to 64 KiB, 40 us + bytes / 8 GB/s beyond.
  const AlphaBeta small{3e-6, 1.0 / 2e9}, large{40e-6, 1.0 / 8e9};
  Synthetic s;
  for (std::int64_t bytes = 1024; bytes <= (64 << 20); bytes *= 4) {
    s.add(OpClass::allgather, {bytes, 2}, (bytes <= 65536 ? small : large).seconds(bytes), MeasurementSplit::fit);
  }
  set.measurements.insert(set.measurements.end(), s.set.measurements.begin(), s.set.measurements.end());
  const Calibration calibration = calibrate({{"synthetic.json", set}});
  const CommunicationFit& fit = calibration.model->communication().at({OpClass::allgather, 2, 2});
  REQUIRE(fit.regimes.size() == 2);
  CHECK(fit.regimes[0].fit.latency_s == Approx(small.latency_s).epsilon(0.1));
  CHECK(fit.regimes[1].fit.seconds_per_byte == Approx(large.seconds_per_byte).epsilon(0.05));
  // The all-reduce is one line: one regime.
  CHECK(calibration.model->communication().at({OpClass::allreduce, 2, 2}).regimes.size() == 1);

  // Written and read back, the profile prices every size as the fit does.
  const nlohmann::json written = profile_json(calibration, "");
  const JsonDocument document = JsonDocument::parse_text(written.dump(), "profile.json");
  const auto read = read_profile(document.root());
  const CommunicationFit& back = read->communication().at({OpClass::allgather, 2, 2});
  REQUIRE(back.regimes.size() == 2);
  CHECK(back.regimes[0].up_to == fit.regimes[0].up_to);
  for (Bytes bytes = 1024; bytes <= (Bytes{256} << 20); bytes *= 2) {
    CHECK(back.seconds(bytes) == Approx(fit.seconds(bytes)).epsilon(1e-12));
  }
}

TEST_CASE("a profile's communication regimes are checked", "[calibration]") {
  const nlohmann::json written = profile_json(calibrate({{"synthetic.json", synthetic_measurements()}}), "");
  auto read_with = [&](const nlohmann::json& entry) {
    nlohmann::json profile = written;
    profile["communication"] = nlohmann::json::array({entry});
    const JsonDocument document = JsonDocument::parse_text(profile.dump(), "profile.json");
    return read_profile(document.root());
  };
  const nlohmann::json line = {{"latency_us", 3}, {"bandwidth_GBps", 2}};
  nlohmann::json entry = {{"op", "allgather"}, {"group_size", 2}, {"ranks_per_node", 2}};
  nlohmann::json bounded = line;
  bounded["up_to_bytes"] = 65536;
  entry["regimes"] = {bounded, line};
  CHECK(read_with(entry)->communication_duration(OpClass::allgather, 1024, 2, 2) == 3000 + 512);
  nlohmann::json both = entry;
  both.update(line);
  CHECK_THROWS_WITH(read_with(both), Catch::Contains("expected either regimes or one latency_us"));
  nlohmann::json unbounded = entry;
  unbounded["regimes"] = {line, line};
  CHECK_THROWS_WITH(read_with(unbounded), Catch::Contains("missing required field 'up_to_bytes'"));
  nlohmann::json last = entry;
  last["regimes"] = {bounded, bounded};
  CHECK_THROWS_WITH(read_with(last), Catch::Contains("expected no up_to_bytes"));
  nlohmann::json decreasing = entry;
  decreasing["regimes"] = {bounded, bounded, line};
  CHECK_THROWS_WITH(read_with(decreasing), Catch::Contains("expected more than the previous regime's 65536"));
}

TEST_CASE("the host's issue time is the median of its samples over every file, and the profile keeps it",
          "[calibration][host]") {
  MeasurementSet first = synthetic_measurements();
  MeasurementSet second = first;
  first.host_issue = {{std::nullopt, {13000.0, 12000.0, 14500.0}}, {OpClass::gemm, {20000.0, 22000.0, 21000.0}}};
  second.host_issue = {{OpClass::gemm, {19000.0}}, {std::nullopt, {11000.0, 13500.0}}};
  // Pooled, every other class: 11000, 12000, 13000, 13500, 14500; GEMMs: 19000, 20000, 21000, 22000.
  const Calibration calibration = calibrate({{"a.json", first}, {"b.json", second}});
  CHECK(calibration.model->host_issue_ns() == 13000);
  CHECK(calibration.model->host_issue_ns(OpClass::gemm) == 20500);
  CHECK(calibration.model->host_issue_ns(OpClass::norm) == 13000);
  const nlohmann::json written = profile_json(calibration, "");
  CHECK(written["host_issue_us"] == 13.0);
  CHECK(written["host_issue_us_by_op"] == nlohmann::json{{"gemm", 20.5}});
  const JsonDocument document = JsonDocument::parse_text(written.dump(), "profile.json");
  const auto back = read_profile(document.root());
  CHECK(back->host_issue_ns(OpClass::attention_fwd) == 13000);
  CHECK(back->host_issue_ns(OpClass::gemm) == 20500);

  // None measured: none in the profile, and no host holds anything back.
  const nlohmann::json without = profile_json(calibrate({{"a.json", synthetic_measurements()}}), "");
  CHECK_FALSE(without.contains("host_issue_us"));
  CHECK_FALSE(without.contains("host_issue_us_by_op"));
  auto rejects = [&](const nlohmann::json& bad, const std::string& message) {
    const JsonDocument profile = JsonDocument::parse_text(bad.dump(), "profile.json");
    CHECK_THROWS_WITH(read_profile(profile.root()), Catch::Contains(message));
  };
  nlohmann::json bad = written;
  bad["host_issue_us"] = 2e4;
  rejects(bad, "host_issue_us: expected at most 10000");
  bad = written;
  bad["host_issue_us_by_op"]["gemm"] = 2e4;
  rejects(bad, "host_issue_us_by_op.gemm: expected at most 10000");
  bad = written;
  bad["host_issue_us_by_op"]["matmul"] = 20;
  rejects(bad, "host_issue_us_by_op.matmul: unknown op class (expected gemm,");
}

TEST_CASE("the kernel gap is the median of its samples over every file, and the profile keeps it",
          "[calibration][host]") {
  MeasurementSet first = synthetic_measurements();
  MeasurementSet second = first;
  MeasurementSet without_gap = first;
  first.kernel_gap = KernelGapMeasurement{{1200.0, 1700.0, 1300.0}};
  second.kernel_gap = KernelGapMeasurement{{1500.0, 1400.0}};
  // Pooled: 1200, 1300, 1400, 1500, 1700.
  const Calibration calibration = calibrate({{"a.json", first}, {"b.json", without_gap}, {"c.json", second}});
  CHECK(calibration.model->kernel_gap_ns() == 1400);
  const nlohmann::json written = profile_json(calibration, "");
  CHECK(written["kernel_gap_us"] == 1.4);
  const JsonDocument document = JsonDocument::parse_text(written.dump(), "profile.json");
  CHECK(read_profile(document.root())->kernel_gap_ns() == 1400);
  // Only from later files too.
  CHECK(calibrate({{"a.json", without_gap}, {"c.json", second}}).model->kernel_gap_ns() == 1450);
  CHECK_FALSE(profile_json(calibrate({{"a.json", without_gap}}), "").contains("kernel_gap_us"));
  nlohmann::json bad = written;
  bad["kernel_gap_us"] = -1;
  const JsonDocument profile = JsonDocument::parse_text(bad.dump(), "profile.json");
  CHECK_THROWS_WITH(read_profile(profile.root()), Catch::Contains("kernel_gap_us: expected a number >= 0"));
}

TEST_CASE("calibration refuses measurements of different devices and incomplete grids", "[calibration]") {
  MeasurementSet a = synthetic_measurements();
  MeasurementSet b = a;
  b.device = "another";
  CHECK_THROWS_WITH(calibrate({{"a.json", a}, {"b.json", b}}),
                    Catch::Contains("b.json: measured on 'another' (cpu backend) but a.json on 'synthetic'"));
  a.measurements.erase(a.measurements.begin() + 1);  // (64, 64, 256)
  CHECK_THROWS_WITH(calibrate({{"a.json", a}}),
                    Catch::Contains("gemm bf16: no measurement at m = 64, n = 64, k = 256"));
}

}  // namespace
}  // namespace weft
