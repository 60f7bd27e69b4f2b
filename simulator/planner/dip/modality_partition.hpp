#pragma once

#include <cstdint>
#include <span>
#include <utility>
#include <vector>

namespace weft::dip {

// PipeWeaver's modality-aware partitioning (papers/001 §5), the formulas it applies per modality
// module before training and per batch.

// The smallest sub-microbatch size whose computational efficiency is at least `fraction` (95% in
// the paper) of the best efficiency among the sizes tried. `efficiency_by_size`: (size, efficiency)
// pairs, any order. InputError when empty or a size or efficiency is not positive.
int smallest_efficient_size(std::span<const std::pair<int, double>> efficiency_by_size, double fraction = 0.95);

// Pipeline segments per module from the modules' latencies: the fastest module gets one, module i
// gets K_i = floor(T_i / T_1). InputError when a latency is not positive.
std::vector<int> segment_counts(std::span<const double> latencies);

// Layers of each of the P x K model chunks of a module of `layers` layers split into `segments`
// segments over `pp` ranks: L / (P K) consecutive layers each, the remainder one more layer each
// to the first chunks. InputError when there are fewer layers than chunks.
std::vector<int> chunk_layers(int layers, int pp, int segments);

// A microbatch of `items` items (images, samples) for a module cut into ceil(N / B)
// sub-microbatches of nearly equal size (sizes differ by at most one, the larger first).
std::vector<int> sub_microbatch_sizes(std::int64_t items, int size);

}  // namespace weft::dip
