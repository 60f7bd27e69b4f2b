#include "simulator/workload/data/length_distribution.hpp"

#include <algorithm>
#include <cmath>
#include <set>
#include <vector>

#include <catch2/catch.hpp>

namespace weft {
namespace {

using Catch::Matchers::Contains;

LengthDistribution distribution_from(const std::string& text, bool zero_allowed = false) {
  const JsonDocument document = JsonDocument::parse_text(text, "distribution.json");
  return load_length_distribution(document.root(), zero_allowed);
}

std::vector<std::int64_t> draws(const LengthDistribution& d, int count) {
  std::vector<std::int64_t> values;
  for (int i = 0; i < count; ++i) {
    SampleRandom random(42, static_cast<std::uint64_t>(i));
    values.push_back(d.draw(random));
  }
  return values;
}

double mean(const std::vector<std::int64_t>& values) {
  double sum = 0.0;
  for (std::int64_t v : values) sum += static_cast<double>(v);
  return sum / static_cast<double>(values.size());
}

TEST_CASE("a sample's random stream depends on the seed and the sample only", "[data]") {
  SampleRandom a(7, 1000);
  SampleRandom b(7, 1000);
  SampleRandom other_sample(7, 1001);
  SampleRandom other_seed(8, 1000);
  const std::uint64_t first = a.next_bits();
  CHECK(first == b.next_bits());
  CHECK(first != other_sample.next_bits());
  CHECK(first != other_seed.next_bits());
}

TEST_CASE("uniform and normal draws have the moments of their laws", "[data]") {
  // 200,000 draws: the standard error of a mean is about 0.0007 (uniform) and 0.0022 (normal).
  constexpr int kDraws = 200'000;
  double uniform_sum = 0.0;
  double normal_sum = 0.0;
  double normal_squares = 0.0;
  double lowest = 1.0;
  double highest = 0.0;
  for (int i = 0; i < kDraws; ++i) {
    SampleRandom random(3, static_cast<std::uint64_t>(i));
    const double u = random.uniform();
    lowest = std::min(lowest, u);
    highest = std::max(highest, u);
    uniform_sum += u;
    const double z = random.standard_normal();
    normal_sum += z;
    normal_squares += z * z;
  }
  CHECK(lowest >= 0.0);
  CHECK(highest < 1.0);
  CHECK(uniform_sum / kDraws == Approx(0.5).margin(0.004));
  CHECK(normal_sum / kDraws == Approx(0.0).margin(0.01));
  CHECK(normal_squares / kDraws == Approx(1.0).margin(0.015));
}

TEST_CASE("fixed, uniform and log-normal token counts", "[data]") {
  SECTION("fixed") {
    const auto values = draws(distribution_from(R"({"distribution": "fixed", "value": 512})"), 100);
    CHECK(std::all_of(values.begin(), values.end(), [](std::int64_t v) { return v == 512; }));
  }
  SECTION("uniform integers cover [min, max] evenly") {
    const auto values = draws(distribution_from(R"({"distribution": "uniform", "min": 10, "max": 19})"), 100'000);
    std::vector<int> counts(10, 0);
    for (std::int64_t v : values) {
      REQUIRE(v >= 10);
      REQUIRE(v <= 19);
      ++counts[static_cast<std::size_t>(v - 10)];
    }
    // Each value has probability 1/10: 10,000 expected, standard deviation 95.
    for (int count : counts) CHECK(std::abs(count - 10'000) < 500);
  }
  SECTION("log-normal: the median is the median, the spread follows sigma, clipped to [min, max]") {
    const LengthDistribution d =
        distribution_from(R"({"distribution": "lognormal", "median": 1000, "sigma": 0.5, "min": 300, "max": 2500})");
    auto values = draws(d, 100'001);
    std::sort(values.begin(), values.end());
    CHECK(values[50'000] == Approx(1000).epsilon(0.02));
    // The 84th percentile of a log-normal is median * e^sigma = 1649.
    CHECK(static_cast<double>(values[84'134]) == Approx(1000 * std::exp(0.5)).epsilon(0.02));
    CHECK(values.front() == 300);  // P(below 300) = P(z < -2.41) = 0.8%: clipped, not dropped
    CHECK(values.back() == 2500);
    CHECK(mean(values) > 1000.0);  // skewed to the right
  }
}

TEST_CASE("bad distributions name the field", "[data][errors]") {
  CHECK_THROWS_WITH(distribution_from(R"({"distribution": "gamma"})"), Contains("distribution") && Contains("gamma"));
  CHECK_THROWS_WITH(distribution_from(R"({"distribution": "uniform", "min": 10, "max": 5})"),
                    Contains("max") && Contains("at least min = 10"));
  CHECK_THROWS_WITH(distribution_from(R"({"distribution": "fixed", "value": 0})"), Contains("value"));
  CHECK_THROWS_WITH(distribution_from(R"({"distribution": "fixed", "value": 5, "sigma": 1})"), Contains("sigma"));
  CHECK_THROWS_WITH(distribution_from(R"({"distribution": "lognormal", "median": 100, "sigma": -1})"),
                    Contains("sigma"));
}

TEST_CASE("counts of media may be zero, token counts may not", "[data]") {
  const LengthDistribution images = distribution_from(R"({"distribution": "uniform", "min": 0, "max": 2})", true);
  SampleRandom random(5, 0);
  std::set<std::int64_t> seen;
  for (int i = 0; i < 200; ++i) seen.insert(images.draw(random));
  CHECK(seen == std::set<std::int64_t>{0, 1, 2});
  CHECK(distribution_from(R"({"distribution": "fixed", "value": 0})", true).draw(random) == 0);
  CHECK_THROWS_WITH(distribution_from(R"({"distribution": "uniform", "min": 0, "max": 2})"),
                    Contains("min") && Contains("expected an integer > 0"));
  CHECK_THROWS_WITH(distribution_from(R"({"distribution": "uniform", "min": -1, "max": 2})", true), Contains("min"));
}

}  // namespace
}  // namespace weft
