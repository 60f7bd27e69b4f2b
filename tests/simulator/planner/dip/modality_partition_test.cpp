// PipeWeaver's partitioning formulas (papers/001 §5) on hand examples.
#include <catch2/catch.hpp>

#include "simulator/core/input_error.hpp"
#include "simulator/planner/dip/modality_partition.hpp"

namespace weft::dip {
namespace {

TEST_CASE("the sub-microbatch size is the smallest within 95% of the best efficiency", "[dip][partition]") {
  // Best 0.88 at size 8; 95% of it is 0.836, first reached at size 5 (0.84).
  const std::vector<std::pair<int, double>> measured = {{8, 0.88}, {1, 0.30}, {2, 0.55}, {3, 0.70},
                                                        {4, 0.80}, {5, 0.84}, {6, 0.86}, {7, 0.87}};
  CHECK(smallest_efficient_size(measured) == 5);
  CHECK(smallest_efficient_size(measured, 0.5) == 2);  // 0.44: size 2 (0.55)
  CHECK(smallest_efficient_size(measured, 1.0) == 8);
  CHECK_THROWS_AS(smallest_efficient_size({}), InputError);
  const std::vector<std::pair<int, double>> zero = {{0, 0.5}};
  CHECK_THROWS_AS(smallest_efficient_size(zero), InputError);
}

TEST_CASE("modules get segments in proportion to their latency over the fastest", "[dip][partition]") {
  // The fastest (10) gets one; 35 / 10 = 3.5 gives 3; 21 / 10 gives 2.
  const std::vector<double> latencies = {35.0, 10.0, 21.0};
  CHECK(segment_counts(latencies) == std::vector<int>{3, 1, 2});
  const std::vector<double> thirds = {0.1, 0.3};  // 0.3 / 0.1 is 2.9999999999999996 in doubles
  CHECK(segment_counts(thirds) == std::vector<int>{1, 3});
  const std::vector<double> bad = {1.0, 0.0};
  CHECK_THROWS_AS(segment_counts(bad), InputError);
}

TEST_CASE("a module's layers go to P x K chunks of consecutive layers", "[dip][partition]") {
  CHECK(chunk_layers(32, 4, 2) == std::vector<int>(8, 4));
  // 30 layers in 8 chunks: 3 each and 6 left over, one more to each of the first six.
  CHECK(chunk_layers(30, 4, 2) == std::vector<int>{4, 4, 4, 4, 4, 4, 3, 3});
  CHECK_THROWS_AS(chunk_layers(7, 4, 2), InputError);
}

TEST_CASE("a microbatch splits into ceil(N / B) nearly equal sub-microbatches", "[dip][partition]") {
  CHECK(sub_microbatch_sizes(7, 3) == std::vector<int>{3, 2, 2});
  CHECK(sub_microbatch_sizes(6, 3) == std::vector<int>{3, 3});
  CHECK(sub_microbatch_sizes(2, 8) == std::vector<int>{2});
  CHECK(sub_microbatch_sizes(0, 4).empty());
  CHECK_THROWS_AS(sub_microbatch_sizes(4, 0), InputError);
}

}  // namespace
}  // namespace weft::dip
