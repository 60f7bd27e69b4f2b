#include "simulator/planner/dip/modality_partition.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "simulator/core/input_error.hpp"

namespace weft::dip {

int smallest_efficient_size(std::span<const std::pair<int, double>> efficiency_by_size, double fraction) {
  if (efficiency_by_size.empty()) throw InputError("sub-microbatch sizes: none was measured");
  double best = 0.0;
  for (const auto& [size, efficiency] : efficiency_by_size) {
    if (size <= 0 || !(efficiency > 0.0)) throw InputError("sub-microbatch sizes: sizes and efficiencies must be > 0");
    best = std::max(best, efficiency);
  }
  int smallest = 0;
  for (const auto& [size, efficiency] : efficiency_by_size) {
    if (efficiency >= fraction * best && (smallest == 0 || size < smallest)) smallest = size;
  }
  return smallest;
}

std::vector<int> segment_counts(std::span<const double> latencies) {
  if (latencies.empty()) return {};
  for (double latency : latencies) {
    if (!(latency > 0.0)) throw InputError("module latencies: must be > 0");
  }
  const double fastest = *std::min_element(latencies.begin(), latencies.end());
  std::vector<int> counts;
  // A ratio that is an integer in exact arithmetic may come out a hair below it (0.3 / 0.1).
  constexpr double kRoundingSlack = 1e-9;
  for (double latency : latencies)
    counts.push_back(static_cast<int>(std::floor(latency / fastest * (1.0 + kRoundingSlack))));
  return counts;
}

std::vector<int> chunk_layers(int layers, int pp, int segments) {
  const int chunks = pp * segments;
  if (pp <= 0 || segments <= 0 || layers < chunks) {
    throw InputError(std::to_string(layers) + " layers cannot fill " + std::to_string(chunks) +
                     " model chunks (pp x segments)");
  }
  std::vector<int> counts(static_cast<std::size_t>(chunks), layers / chunks);
  for (int c = 0; c < layers % chunks; ++c) ++counts[static_cast<std::size_t>(c)];
  return counts;
}

std::vector<int> sub_microbatch_sizes(std::int64_t items, int size) {
  if (size <= 0) throw InputError("sub-microbatch size: must be > 0");
  if (items <= 0) return {};
  const std::int64_t count = (items + size - 1) / size;
  std::vector<int> sizes(static_cast<std::size_t>(count), static_cast<int>(items / count));
  for (std::int64_t k = 0; k < items % count; ++k) ++sizes[static_cast<std::size_t>(k)];
  return sizes;
}

}  // namespace weft::dip
